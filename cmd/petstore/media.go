package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"time"

	"github.com/acme-pets/petstore/internal/media"
	"github.com/acme-pets/petstore/internal/petstore"
)

// checkMedia checks where the photos go: a directory or a storage URL, not both; a
// directory beside an SQLite database unless told.
func (c *serveConfig) checkMedia() error {
	switch {
	case c.mediaDir != "" && c.mediaURL != "":
		return errors.New("--media-dir and --media-url: give one; --media-url keeps the photos in S3-compatible storage, --media-dir in a directory")
	case c.mediaURL != "":
		u, err := url.Parse(c.mediaURL)
		if err != nil || u.Scheme != "s3" || u.Host == "" {
			return errors.New("--media-url: want s3://bucket/prefix (?endpoint=http://host:port for a server other than AWS); a directory is --media-dir")
		}
	case c.mediaDir == "" && !isPostgres(c.database):
		c.mediaDir = filepath.Join(filepath.Dir(c.database), "media")
	}
	return nil
}

// openMedia opens the store of the photos' files: nil when there is none (PostgreSQL
// without --media-dir or --media-url: the photo operations then answer 501).
func (c serveConfig) openMedia(ctx context.Context, log *slog.Logger) (media.Store, error) {
	switch {
	case c.mediaURL != "":
		s, err := media.Open(ctx, c.mediaURL)
		if err != nil {
			return nil, err
		}
		if s3, ok := s.(*media.S3); ok {
			check, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := s3.Check(check); err != nil {
				return nil, fmt.Errorf("--media-url %s: %w", redactDSN(c.mediaURL), err)
			}
		}
		log.Info("photos are kept in object storage", "url", redactDSN(c.mediaURL))
		return s, nil
	case c.mediaDir != "":
		return media.NewDir(c.mediaDir)
	}
	log.Warn("photos are off: a PostgreSQL database needs --media-dir or --media-url for them")
	return nil, nil
}

// Photo files left without a row are swept a minute after the start (an instance
// restarted often must sweep too), then once an hour; a file younger than sweepGrace
// may belong to an upload whose row is not written yet.
const (
	sweepFirst = time.Minute
	sweepEvery = time.Hour
	sweepGrace = time.Hour
)

// sweepPhotos removes the files of photos no pet has (media.Sweep), sweepFirst after
// the start, then every sweepEvery.
func sweepPhotos(ctx context.Context, files media.Store, st petstore.Store, log *slog.Logger) {
	t := time.NewTimer(sweepFirst)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		t.Reset(sweepEvery)
		n, err := media.Sweep(ctx, files, st.KnownPhotos, time.Now().Add(-sweepGrace))
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("sweep photo files", "err", err)
		case n > 0:
			log.Info("removed the files of photos no pet has", "photos", n)
		}
	}
}
