/*
 * sock.bpf.h: part of record.bpf.c, included in its place: socket
 * messages (the socket storages "skaddr" and "skq": addresses written
 * once, bursts recorded once), sends, receives and data ready.
 */

/*
 * The identity of a TCP connection's messages, so that a send recorded
 * on one host pairs with its receive recorded on another: each
 * message's first sequence number (the sock_send or sock_recv record's
 * sixth field), and the connection's addresses and ports, written when
 * a socket first sends or receives (RB_SOCK_ADDR; the loader writes
 * them again into each segment before the socket's first message
 * there). The socket's storage says they were written, and to whom.
 *
 * A UDP datagram's identity is a hash of its first bytes instead (the
 * sixth field; UDP has no sequence), read from the buffer of the system
 * call that sends or received it, and the addresses are those of a
 * connected UDP socket (written again when it connects to another
 * peer): an unconnected one's peer is the datagram's, which the
 * tracepoints do not give (a receive's address is copied out after
 * them).
 */
struct skaddr {
	__u64 peer;	/* RB_SOCK_ADDR written for this peer: the ports
			   and the address's last word; 0: none */
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct skaddr);
} skaddr SEC(".maps");

#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17
#define SOCK_STREAM 1
#define SOCK_DGRAM 2
#define MSG_PEEK_FLAG 2
#define UDP_HASH_BYTES 16

/* Hash the first bytes of UDP datagrams (ARGUS_BPF_SKIP=udp_hash: not,
   to measure what it costs). */
const volatile int udp_hash;

/* A TCP socket (a raw socket of protocol 6 is not one: it has no
   tcp_sock to read), as the kernel's sk_is_tcp() tells. */
static __always_inline int
is_tcp(struct sock *sk)
{
	return sk->sk_type == SOCK_STREAM && sk->sk_protocol == IPPROTO_TCP;
}

/* A UDP socket (of IPv4 or IPv6; not UDP-Lite). */
static __always_inline int
is_udp(struct sock *sk)
{
	return sk->sk_type == SOCK_DGRAM && sk->sk_protocol == IPPROTO_UDP;
}

/*
 * The hash of the first bytes (UDP_HASH_BYTES at most) of the ret bytes
 * the current task's system call just sent or received: 32 bits of
 * FNV-1a, never 0; 0 when the call is not one whose buffer is known
 * (read, write, recvfrom, sendto, readv, writev, recvmsg, sendmsg: the
 * first buffer; not the batches of recvmmsg and sendmmsg, nor io_uring)
 * or the bytes cannot be read. One helper call for the registers and
 * one to three user reads.
 */
static __always_inline __u64
payload_hash(int ret)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(
	    bpf_get_current_task_btf());
	__u8 b[UDP_HASH_BYTES] = {};
	__u64 p, iov;
	__u32 n = ret < UDP_HASH_BYTES ? (__u32)ret : UDP_HASH_BYTES;
	__u32 h = 2166136261u;

	if (!regs || ret <= 0)
		return 0;
	p = regs->si;
	switch (regs->orig_ax) {
	case 0: case 1: case 44: case 45:	/* read write sendto recvfrom */
		break;
	case 46: case 47:			/* sendmsg recvmsg: msg_iov */
		if (bpf_probe_read_user(&iov, 8, (void *)(p + 16)) != 0)
			return 0;
		p = iov;
		/* fall through: the first iovec's base */
	case 19: case 20:			/* readv writev */
		if (bpf_probe_read_user(&p, 8, (void *)p) != 0)
			return 0;
		break;
	default:
		return 0;
	}
	/* 1 to UDP_HASH_BYTES, as the verifier sees it too */
	if (n == 0 || bpf_probe_read_user(b, ((n - 1) &
	    (UDP_HASH_BYTES - 1)) + 1, (void *)p) != 0)
		return 0;
#pragma unroll
	for (int i = 0; i < UDP_HASH_BYTES; i++)
		h = (h ^ b[i]) * 16777619u;
	return h ? h : 1;
}

/* A message's identity, the sock_send or sock_recv record's sixth field:
   a TCP socket's first sequence number of the ret bytes just sent (or
   received), a UDP datagram's payload_hash(); 0 for another socket, or
   a receive that only peeked. */
static __always_inline __u64
msg_id(struct sock *sk, int ret, int send, int flags)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	__u32 end;

	if (ret <= 0 || (!send && (flags & MSG_PEEK_FLAG)))
		return 0;
	if (!is_tcp(sk))
		return udp_hash && is_udp(sk) ? payload_hash(ret) : 0;
	end = send ? BPF_CORE_READ(tp, write_seq) :
	    BPF_CORE_READ(tp, copied_seq);
	return (__u64)(__u32)(end - (__u32)ret);
}

/* A connected UDP socket (it has a peer). */
static __always_inline int
udp_connected(struct sock *sk)
{
	return is_udp(sk) && sk->__sk_common.skc_dport != 0;
}

/* Write sk's addresses, a TCP or connected UDP socket's, when not
   written yet for its peer (marked once the record is in the ring: a
   full ring tries again at the next message). */
static __always_inline int
sock_addr(struct sock *sk)
{
	__u16 fam = sk->__sk_common.skc_family;
	__u8 proto = is_tcp(sk) ? IPPROTO_TCP : IPPROTO_UDP;
	struct skaddr *a;
	__u64 peer, ports;

	if ((fam != AF_INET && fam != AF_INET6) ||
	    (proto == IPPROTO_UDP && !udp_connected(sk)))
		return 0;
	a = bpf_sk_storage_get(&skaddr, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!a)
		return 0;
	ports = (__u64)sk->__sk_common.skc_num |
	    (__u64)bpf_ntohs(sk->__sk_common.skc_dport) << 16;
	if (fam == AF_INET) {
		peer = ports << 32 | sk->__sk_common.skc_daddr;
		if (a->peer == peer)
			return 0;
		EMIT(8, RB_SOCK_ADDR, cur_tid(), (__u64)sk, (__u64)fam,
		    (__u64)proto, ports,
		    (__u64)sk->__sk_common.skc_rcv_saddr,
		    (__u64)sk->__sk_common.skc_daddr, 0, 0);
	} else {
		__u64 l[2], r[2];
		BPF_CORE_READ_INTO(&r, sk, __sk_common.skc_v6_daddr);
		peer = ports << 32 | (__u32)(r[1] >> 32);
		if (a->peer == peer)
			return 0;
		BPF_CORE_READ_INTO(&l, sk, __sk_common.skc_v6_rcv_saddr);
		EMIT(8, RB_SOCK_ADDR, cur_tid(), (__u64)sk, (__u64)fam,
		    (__u64)proto, ports, l[0], l[1], r[0], r[1]);
	}
	a->peer = peer;
	return 0;
}

/* Whether a TCP socket's peer is on this host (a loopback address, or
   its own): the receive's sk_data_ready then names the sender. */
static __always_inline int
peer_local(struct sock *sk)
{
	if (sk->__sk_common.skc_family == AF_INET) {
		__u32 d = sk->__sk_common.skc_daddr;
		return (d & 0xff) == 127 || d == sk->__sk_common.skc_rcv_saddr;
	}
	__u32 l[4], r[4];
	BPF_CORE_READ_INTO(&l, sk, __sk_common.skc_v6_rcv_saddr);
	BPF_CORE_READ_INTO(&r, sk, __sk_common.skc_v6_daddr);
	if ((r[0] | r[1] | r[2]) == 0 && r[3] == bpf_htonl(1))
		return 1;	/* ::1 */
	if ((r[0] | r[1]) == 0 && r[2] == bpf_htonl(0xffff) &&
	    (r[3] & 0xff) == 127)
		return 1;	/* ::ffff:127.x */
	return r[0] == l[0] && r[1] == l[1] && r[2] == l[2] && r[3] == l[3];
}

/* Loaded in the full set, or with argus record --net, which keeps the
   sends of TCP messages to another host only: on one host, the
   receive's sk_data_ready runs in the sender's context or is raised by
   it, and pairs them. */
SEC("tp_btf/sock_send_length")
int BPF_PROG(on_sock_send, struct sock *sk, int ret, int flags)
{
	if (!full && ((!is_tcp(sk) && !udp_connected(sk)) || ret <= 0 ||
	    peer_local(sk)))
		return 0;
	SCOPE(cur_in());
	sock_addr(sk);
	EMIT(6, RB_SOCK_SEND, cur_tid(), (__u64)sk,
	    (__u64)sk->__sk_common.skc_family,
	    (__u64)sk->sk_protocol, (__u64)(__s64)ret,
	    (__u64)(__u32)flags, msg_id(sk, ret, 1, flags));
	return 0;
}

/*
 * Messages in bursts: the default set records a message into a socket
 * only when the socket held no unread data (its receive queue holds
 * only this message), or none announced yet unread, and a receive only
 * when it takes an announced one. A burst of messages is then one
 * record each way: the engine's edge goes from the sender that filled
 * the empty socket to the receive that found it (a thread that waits
 * for a message always waits on an empty socket, so its wake-up always
 * has its message). A mark left by a message never read by a traced
 * receive (a kernel reader) goes stale after SK_STALE_NS.
 */
struct skq {
	__u64 ts;	/* the unread announced message, 0: none */
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct skq);
} skq SEC(".maps");

#define SK_STALE_NS 100000000ull
#define MSG_PEEK 2

SEC("tp_btf/sock_recv_length")
int BPF_PROG(on_sock_recv, struct sock *sk, int ret, int flags)
{
	if (!full && ret != 0) {
		struct skq *q;

		if (ret < 0 || (flags & MSG_PEEK))
			return 0;	/* nothing taken */
		q = bpf_sk_storage_get(&skq, sk, 0, 0);
		if (q && q->ts == 0)
			return 0;	/* the rest of a burst */
		if (q)
			q->ts = 0;
	}
	/* the burst's mark is kept whoever reads; the record only in the
	   scope */
	SCOPE(cur_in());
	sock_addr(sk);
	EMIT(6, RB_SOCK_RECV, cur_tid(), (__u64)sk,
	    (__u64)sk->__sk_common.skc_family,
	    (__u64)sk->sk_protocol, (__u64)(__s64)ret,
	    (__u64)(__u32)flags, msg_id(sk, ret, 0, flags));
	return 0;
}

SEC("tp_btf/sk_data_ready")
int BPF_PROG(on_sk_ready, const struct sock *sk)
{
	if (!full) {
		struct skq *q;

		/* more than the message just queued: the socket held unread
		   data already, the message joins it (a plain load) */
		if (sk->sk_receive_queue.qlen > 1)
			return 0;
		q = bpf_sk_storage_get(&skq, (struct sock *)sk, 0,
		    BPF_SK_STORAGE_GET_F_CREATE);
		__u64 now = bpf_ktime_get_boot_ns();

		if (q) {
			if (q->ts != 0 && now - q->ts < SK_STALE_NS)
				return 0;	/* joins the unread one */
			q->ts = now;
		}
	}
	/* its socket inside the scope, or its sender */
	SCOPE(cur_in() || sk_in((struct sock *)sk));
	EMIT(3, RB_SK_DATA_READY, cur_tid(), (__u64)sk,
	    (__u64)sk->__sk_common.skc_family,
	    (__u64)sk->sk_protocol);
	return 0;
}
