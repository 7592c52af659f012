// The page script of /docs: it starts the Scalar API reference with an offline
// configuration and keeps try-it away from the operations marked x-hideTryItPanel.
// internal/docs/docs.go (the package comment) explains the choices.
(() => {
  'use strict';

  const cfg = JSON.parse(document.getElementById('docs-config').textContent);

  // canonicalPath reads a URL path the way the server will route it: percent-escapes
  // decoded, empty and "." segments dropped, ".." applied (Go's ServeMux redirects an
  // unclean path to its clean form, and fetch would follow). null: not decodable.
  const canonicalPath = (pathname) => {
    let decoded;
    try {
      decoded = decodeURIComponent(pathname);
    } catch {
      return null;
    }
    const out = [];
    for (const seg of decoded.split('/')) {
      if (seg === '' || seg === '.') continue;
      if (seg === '..') out.pop();
      else out.push(seg);
    }
    return '/' + out.join('/');
  };

  const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

  // One rule per operation with x-hideTryItPanel: its method and its path template
  // (under the server's path) as a pattern; a path parameter is one segment.
  const refused = cfg.tryItOff.map((op) => ({
    label: `${op.method} ${op.path}`,
    methods: op.method === 'GET' ? ['GET', 'HEAD'] : [op.method],
    pattern: new RegExp(
      '^' +
        (cfg.serverPath + op.path)
          .split(/(\{[^}]+\})/)
          .map((part) => (/^\{[^}]+\}$/.test(part) ? '[^/]+' : escapeRegExp(part)))
          .join('') +
        '$',
    ),
  }));

  // refusal names the turned-off operation a request would reach, or ''.
  const refusal = (input, init) => {
    const method = String(
      (init && init.method) || (input instanceof Request ? input.method : 'GET'),
    ).toUpperCase();
    const href = input instanceof Request ? input.url : String(input);
    const path = canonicalPath(new URL(href, window.location.href).pathname);
    if (path === null) return 'a request whose path cannot be read';
    const rule = refused.find((r) => r.methods.includes(method) && r.pattern.test(path));
    return rule ? rule.label : '';
  };

  // guardedFetch is the only way the page sends requests: Scalar is given it as
  // customFetch, and it replaces window.fetch as well, so a request for a turned-off
  // operation never leaves the page, however the API client window was reached.
  const pageFetch = window.fetch.bind(window);
  const guardedFetch = (input, init) => {
    const op = refusal(input, init);
    if (op) {
      return Promise.reject(
        new Error(`Try-it is turned off for ${op} on this page; use one of the code samples.`),
      );
    }
    return pageFetch(input, init);
  };
  window.fetch = guardedFetch;

  window.Scalar.createApiReference('#app', {
    url: cfg.documentUrl,
    // Try-it goes to the origin the page came from, whatever host name the reader
    // used, so requests stay same-origin (the CSP allows no other).
    servers: [{ url: window.location.origin + cfg.serverPath, description: 'This server' }],
    customFetch: guardedFetch,
    authentication: { preferredSecurityScheme: 'bearerAuth' },
    // Only the document's own samples (x-codeSamples), no generated clients.
    hiddenClients: true,
    hideClientButton: true,
    defaultOpenAllTags: true,
    documentDownloadType: 'none',
    // Offline: no web fonts, no telemetry, no AI agent, no MCP, no developer tools.
    withDefaultFonts: false,
    telemetry: false,
    showDeveloperTools: 'never',
    agent: { disabled: true },
    mcp: { disabled: true },
  });
})();
