#!/usr/bin/env python3
"""An HTTP CONNECT proxy on loopback for the tests (tests/kube/kube_exec_test.cpp).

Usage: connect-proxy.py STATE_DIR [USER:PASSWORD]

Listens on 127.0.0.1 on a free port and writes the port to STATE_DIR/port; every tunnel it
opens adds one to STATE_DIR/tunnels. With USER:PASSWORD it answers 407 to a CONNECT without
that Proxy-Authorization (Basic). It only tunnels to loopback and only with CONNECT.
"""
import base64
import os
import socket
import sys
import threading

LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


def write_atomically(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def read_head(conn):
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = conn.recv(4096)
        if not chunk:
            return None, b""
        head += chunk
    header, rest = head.split(b"\r\n\r\n", 1)
    return header.decode("latin-1").split("\r\n"), rest


class Proxy:
    def __init__(self, state_dir, credentials):
        self.state_dir = state_dir
        self.expected_auth = (
            "Basic " + base64.b64encode(credentials.encode()).decode() if credentials else None
        )
        self.tunnels = 0
        self.lock = threading.Lock()

    def answer(self, conn, status):
        conn.sendall(("HTTP/1.1 " + status + "\r\nContent-Length: 0\r\n\r\n").encode())
        conn.close()

    def handle(self, conn):
        lines, rest = read_head(conn)
        if not lines:
            conn.close()
            return
        method, target, _ = (lines[0].split(" ", 2) + ["", ""])[:3]
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if method != "CONNECT":
            return self.answer(conn, "405 Method Not Allowed")
        if self.expected_auth and headers.get("proxy-authorization") != self.expected_auth:
            return self.answer(conn, "407 Proxy Authentication Required")
        host, _, port = target.rpartition(":")
        if host not in LOOPBACK:
            return self.answer(conn, "403 Forbidden")
        try:
            upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
            upstream.settimeout(None)
        except (OSError, ValueError):
            return self.answer(conn, "502 Bad Gateway")
        with self.lock:
            self.tunnels += 1
            write_atomically(os.path.join(self.state_dir, "tunnels"), str(self.tunnels))
        conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        if rest:
            upstream.sendall(rest)
        threading.Thread(target=pump, args=(upstream, conn), daemon=True).start()
        pump(conn, upstream)

    def serve(self):
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        write_atomically(os.path.join(self.state_dir, "port"), str(server.getsockname()[1]))
        while True:
            conn, _ = server.accept()
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    Proxy(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else None).serve()
