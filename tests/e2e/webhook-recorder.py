#!/usr/bin/env python3
"""A throwaway admission webhook for the end-to-end tests (standard library only).

Serves HTTPS on 127.0.0.1:PORT with the given certificate, saves every AdmissionReview it
receives as RECORD_DIR/NNN.json, and answers allowed. With --add-label KEY=VALUE it also returns a
JSONPatch adding that label when the object lacks it, which makes the API server re-invoke
earlier mutating webhooks that have reinvocationPolicy: IfNeeded. Runs until killed.
"""

import argparse
import base64
import http.server
import json
import os
import ssl
import threading


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--cert-dir", required=True, help="directory with tls.crt and tls.key")
    p.add_argument("--record-dir", required=True)
    p.add_argument("--add-label", help="KEY=VALUE")
    args = p.parse_args()
    os.makedirs(args.record_dir, exist_ok=True)
    label = args.add_label.split("=", 1) if args.add_label else None
    lock = threading.Lock()
    count = [0]

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            review = json.loads(body)
            with lock:
                count[0] += 1
                path = os.path.join(args.record_dir, f"{count[0]:03d}.json")
            with open(path, "wb") as f:
                f.write(body)
            request = review["request"]
            response = {"uid": request["uid"], "allowed": True}
            labels = ((request.get("object") or {}).get("metadata") or {}).get("labels")
            if label and (labels or {}).get(label[0]) != label[1]:
                key = label[0].replace("~", "~0").replace("/", "~1")
                patch = (
                    [{"op": "add", "path": f"/metadata/labels/{key}", "value": label[1]}]
                    if labels
                    else [{"op": "add", "path": "/metadata/labels", "value": {label[0]: label[1]}}]
                )
                response["patchType"] = "JSONPatch"
                response["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
            answer = json.dumps(
                {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, fmt: str, *a: object) -> None:
            print(fmt % a, flush=True)

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(args.cert_dir, "tls.crt"), os.path.join(args.cert_dir, "tls.key"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    print(f"listening on 127.0.0.1:{args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
