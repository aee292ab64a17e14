# udpping.py: pings and pongs over UDP, for the test of UDP message
# identity (udpid.sh). "server ADDR PORT N" takes the first ping on an
# unconnected socket (recvfrom), answers it with sendto, then connects to
# its sender and answers the other N - 1 with send and recv (a ping sent
# again is not answered again); "client ADDR PORT N" sends N pings from a
# connected socket, 50 ms apart, each after the pong of the one before
# (the first sent again every 20 ms until its pong comes, for 2 s: the
# server may not be up yet), the even ones with send and recv, the odd
# ones with sendmsg and recvmsg. Each ping's first 16 bytes differ from
# every other's. Either gives up after 20 s.
import socket, sys, time

fam = socket.AF_INET6 if ":" in sys.argv[2] else socket.AF_INET
addr, port, n = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(fam, socket.SOCK_DGRAM)
s.settimeout(20)
if sys.argv[1] == "server":
    s.bind((addr, port))
    d, peer = s.recvfrom(100)
    s.sendto(b"pong" + d[4:], peer)
    s.connect(peer)
    seen = {d}
    while len(seen) < n:
        d = s.recv(100)
        if d not in seen:	# a ping sent again is not answered again
            seen.add(d)
            s.send(b"pong" + d[4:])
else:
    s.connect((addr, port))
    for i in range(n):
        msg = b"ping%03d-%08d-udp" % (i, i * 7919)
        for _ in range(100 if i == 0 else 1):
            if i % 2:
                s.sendmsg([msg])
            else:
                s.send(msg)
            s.settimeout(0.02 if i == 0 else 20)
            try:
                s.recvmsg(100) if i % 2 else s.recv(100)
                break
            except (socket.timeout, ConnectionRefusedError):
                continue
        time.sleep(0.05)
