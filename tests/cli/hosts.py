# hosts.py: the client and the API server of the three hosts of
# tests/tools/hosts-scenario.sh (client -> api -> db), standard library
# only.
#
#   api ADDR PORT DBADDR DBPORT
#       connects to PostgreSQL at DBADDR:DBPORT (user and database
#       postgres, trust authentication; retrying for 10 s), then serves
#       one client on ADDR:PORT: each line "bump ID" runs one UPDATE of
#       row ID of table t and is answered "ok V" (the row's new value),
#       until the client closes. Gives up after 20 s without a client or
#       a request.
#   client ADDR PORT NORMAL HELD N
#       connects (retrying for 10 s), makes N quick requests, creates the
#       file NORMAL, waits for the file HELD (the row is locked on the
#       database host), makes one more request (the one that waits for
#       the lock), then one last quick one. Prints each request's
#       duration in ms, one line each.
import os, select, socket, struct, sys, time


class PgError(Exception):
    pass


def blocking(s):
    """S blocking in its calls themselves (a thread waiting for a reply
    sits in recvfrom, not in poll), for 20 s at most each."""
    s.settimeout(None)
    tv = struct.pack("ll", 20, 0)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, tv)
    return s


class Pg:
    """A PostgreSQL connection of the frontend/backend protocol 3.0:
    the startup message and simple queries, nothing else."""

    def __init__(self, addr, port):
        self.s = blocking(socket.create_connection((addr, port),
                                                   timeout=5))
        self.buf = b""
        params = b"user\0postgres\0database\0postgres\0\0"
        self.s.sendall(struct.pack("!ii", 8 + len(params), 196608) + params)
        while True:
            t, body = self.message()
            if t == b"R" and struct.unpack("!i", body[:4])[0] != 0:
                raise PgError("authentication other than trust asked")
            if t == b"E":
                raise PgError(self.error(body))
            if t == b"Z":
                return

    def take(self, n):
        while len(self.buf) < n:
            d = self.s.recv(65536)
            if not d:
                raise PgError("the server closed the connection")
            self.buf += d
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def message(self):
        head = self.take(5)
        n = struct.unpack("!i", head[1:])[0]
        return head[:1], self.take(n - 4)

    @staticmethod
    def error(body):
        fields = dict((f[:1], f[1:].decode(errors="replace"))
                      for f in body.split(b"\0") if f)
        return fields.get(b"M", "error")

    def query(self, sql):
        """The rows of SQL (lists of str or None), or PgError."""
        q = sql.encode() + b"\0"
        self.s.sendall(b"Q" + struct.pack("!i", 4 + len(q)) + q)
        rows, err = [], None
        while True:
            t, body = self.message()
            if t == b"D":
                ncol = struct.unpack("!h", body[:2])[0]
                at, row = 2, []
                for _ in range(ncol):
                    n = struct.unpack("!i", body[at:at + 4])[0]
                    at += 4
                    row.append(None if n < 0 else
                               body[at:at + n].decode())
                    at += max(n, 0)
                rows.append(row)
            elif t == b"E":
                err = self.error(body)
            elif t == b"Z":
                if err is not None:
                    raise PgError(err)
                return rows


def connect_retrying(addr, port, seconds):
    end = time.monotonic() + seconds
    while True:
        try:
            return blocking(socket.create_connection((addr, port),
                                                     timeout=5))
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.02)


def api(addr, port, dbaddr, dbport):
    end = time.monotonic() + 10
    while True:
        try:
            db = Pg(dbaddr, dbport)
            break
        except (OSError, PgError):
            if time.monotonic() > end:
                raise
            time.sleep(0.05)
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(1)
    ls.settimeout(20)
    c, _ = ls.accept()
    blocking(c)
    f = c.makefile("rb")
    for line in f:
        w = line.split()
        if len(w) == 2 and w[0] == b"bump" and w[1].isdigit():
            try:
                rows = db.query("UPDATE t SET v = v + 1 WHERE id = %d "
                                "RETURNING v" % int(w[1]))
                reply = "ok %s\n" % (rows[0][0] if rows else "none")
            except PgError as e:
                reply = "error %s\n" % e
        else:
            reply = "error bad request\n"
        c.sendall(reply.encode())
    c.close()


def client(addr, port, normal, held, n, sliced):
    c = connect_retrying(addr, port, 10)
    f = c.makefile("rb")

    def bump():
        t0 = time.monotonic()
        c.sendall(b"bump 1\n")
        # sliced: wait for the reply a second at a time, as a client
        # with a poll timeout does
        while sliced and not select.select([c], [], [], 1.0)[0]:
            pass
        reply = f.readline()
        if not reply.startswith(b"ok "):
            sys.exit("client: bad reply %r" % reply)
        print("%.1f" % ((time.monotonic() - t0) * 1e3), flush=True)

    for _ in range(n):
        bump()
        time.sleep(0.02)
    open(normal, "w").close()
    end = time.monotonic() + 20
    while not os.path.exists(held):
        if time.monotonic() > end:
            sys.exit("client: the row was never locked")
        time.sleep(0.01)
    bump()
    bump()
    c.close()


if __name__ == "__main__":
    a = sys.argv
    if a[1] == "api":
        api(a[2], int(a[3]), a[4], int(a[5]))
    elif a[1] == "client":
        client(a[2], int(a[3]), a[4], a[5], int(a[6]),
               len(a) > 7 and a[7] == "sliced")
    else:
        sys.exit("usage: hosts.py api|client ...")
