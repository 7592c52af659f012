# A webhook receiver in Python that checks Petstore-Signature before it trusts a
# delivery. Run: PETSTORE_WEBHOOK_SECRET=whsec_… PORT=4242 python3 receiver.py
import hashlib
import hmac
import json
import os
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

SECRET = os.environ["PETSTORE_WEBHOOK_SECRET"].encode()
TOLERANCE_SECONDS = 300
seen = set()  # event ids already handled: a delivery may come more than once


def verify(header, body):
    """Whether header signs body (the raw bytes): a timestamp within the tolerance and
    one v1 (two while a rotated secret overlaps) equal to HMAC-SHA256 of "<t>.<body>"."""
    pairs = [p.strip().split("=", 1) for p in (header or "").split(",") if "=" in p]
    t = next((v for k, v in pairs if k == "t"), "")
    if not t.isdigit() or abs(time.time() - int(t)) > TOLERANCE_SECONDS:
        return False
    expected = hmac.new(SECRET, t.encode() + b"." + body, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(v, expected) for k, v in pairs if k == "v1")


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if not verify(self.headers.get("Petstore-Signature"), body):
            self.send_response(400)
            self.end_headers()
            return
        event = json.loads(body)
        if event["id"] not in seen:
            seen.add(event["id"])
            print(event["type"], event["id"], flush=True)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


server = HTTPServer(("127.0.0.1", int(os.environ["PORT"])), Receiver)
print("listening", flush=True)
server.serve_forever()
