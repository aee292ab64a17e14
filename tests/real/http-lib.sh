# tests/real/http-lib.sh: a small HTTP server in Python (http.server of
# Debian's python3, a thread per request) and, for the proxy cases, a
# reverse proxy (Debian's nginx) in front of it, both on the loopback
# at ports of their own, their files in the case's directory (sourced
# by the curl-*.case files, after case-lib.sh). GET /quick answers at
# once; GET /slow waits for a lock that a thread of the server, the
# holder, takes at start-up and keeps until 2.5 s after a request to
# /slow arrived. The server writes the tids of the holder and of the
# handler of /slow to DIR/holder and DIR/handler.

# http_setup: write the server and start it; its port in $D/port
http_setup() {
	cat > "$D/server.py" <<'PYEOF'
import http.server, sys, threading, time
d, port = sys.argv[1], int(sys.argv[2])
lock = threading.Lock()
arrived = threading.Event()
def holder():
    with lock:
        open(d + "/holder", "w").write(str(threading.get_native_id()))
        arrived.wait()
        time.sleep(2.5)
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def do_GET(self):
        if self.path == "/slow":
            open(d + "/handler", "w").write(str(threading.get_native_id()))
            arrived.set()
            with lock:
                pass
        body = b"done\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
threading.Thread(target=holder, name="holder", daemon=True).start()
open(d + "/ready", "w").close()
server.serve_forever()
PYEOF
	echo $((20000 + $$ % 20000)) > "$D/port"
	$PY "$D/server.py" "$D" "$(cat "$D/port")" > "$D/server.log" 2>&1 &
	echo $! > "$D/server.pid"
	remember $!
	wait_for '[ -f "$D/ready" ] && [ -s "$D/holder" ]'
}

# nginx_setup: nginx as a reverse proxy to the server, its
# configuration, logs, temporary files and pid file in $D/nginx; its
# port in $D/proxy_port
nginx_setup() {
	command -v nginx > /dev/null || [ -x /usr/sbin/nginx ]
	mkdir -p "$D/nginx"
	echo $((20000 + ($$ + 1) % 20000)) > "$D/proxy_port"
	cat > "$D/nginx/nginx.conf" <<NGEOF
worker_processes 1;
pid $D/nginx/nginx.pid;
error_log $D/nginx/error.log;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $D/nginx/body;
	proxy_temp_path $D/nginx/proxy;
	fastcgi_temp_path $D/nginx/fastcgi;
	uwsgi_temp_path $D/nginx/uwsgi;
	scgi_temp_path $D/nginx/scgi;
	server {
		listen 127.0.0.1:$(cat "$D/proxy_port");
		location / {
			proxy_pass http://127.0.0.1:$(cat "$D/port");
			proxy_http_version 1.1;
		}
	}
}
NGEOF
	/usr/sbin/nginx -p "$D/nginx" -e "$D/nginx/error.log" \
	    -c "$D/nginx/nginx.conf"
	wait_for '[ -s "$D/nginx/nginx.pid" ]'
}

# nginx_teardown: stop nginx (its master, then its workers, which the
# runner does not know)
nginx_teardown() {
	[ -s "$D/nginx/nginx.pid" ] && /usr/sbin/nginx -p "$D/nginx" \
	    -e "$D/nginx/error.log" -c "$D/nginx/nginx.conf" -s stop
	return 0
}

# curl_get PATH...: curl(1) GETs each PATH in turn (over one connection)
# from base URL $url in the background; sets $client
curl_get() {
	_u=
	for _p; do _u="$_u $url$_p"; done
	curl -sS $_u > "$D/curl.out" 2>&1 &
	client=$!
	remember $client
}
