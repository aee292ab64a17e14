# pingpong.py: pings and pongs over TCP, for the tests of several hosts
# (msgid.sh, netns.sh): "server ADDR PORT" answers each ping of one
# client with a pong until it closes; "client ADDR PORT N" connects
# (retrying for 2 s) and sends N pings 50 ms apart, each after the pong
# of the one before; "local N" does both over ::1 in one process. A
# server whose client never comes gives up after 20 s.
import socket, sys, threading, time

def answer(c):
    c.settimeout(20)
    while True:
        d = c.recv(100)
        if not d:
            break
        c.sendall(b"pong" + d[4:])

def listener(addr, port):
    s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(1)
    s.settimeout(20)
    return s

def ping(c, n):
    for i in range(n):
        c.sendall(b"ping%03d" % i)
        c.recv(100)
        time.sleep(0.05)
    c.close()

if sys.argv[1] == "server":
    c, _ = listener(sys.argv[2], int(sys.argv[3])).accept()
    answer(c)
elif sys.argv[1] == "client":
    for _ in range(100):
        try:
            c = socket.create_connection((sys.argv[2], int(sys.argv[3])))
            break
        except OSError:
            time.sleep(0.02)
    ping(c, int(sys.argv[4]))
else:
    s = listener("::1", 0)
    t = threading.Thread(target=lambda: answer(s.accept()[0]), daemon=True)
    t.start()
    ping(socket.create_connection(("::1", s.getsockname()[1])),
         int(sys.argv[2]))
    time.sleep(0.1)
