/*
 * sys.bpf.h: part of record.bpf.c, included in its place: system
 * calls (entries, and the exits of the calls a task blocked in or that
 * woke others), libargus's marker writes, and file locks.
 */

static __always_inline int
emit_marker(__u32 tid, __u64 buf, long n)
{
	__u32 k = 0;
	struct mk *m = bpf_map_lookup_elem(&scratch, &k);

	if (!m || n <= 0)
		return 0;
	if (n > RB_MARKER_MAX)
		n = RB_MARKER_MAX;
	head(&m->h, RB_MARKER, tid);
	m->len = (__u64)n;
	if (bpf_probe_read_user(m->data, n & (RB_MARKER_MAX * 2 - 1) &
	    (RB_MARKER_MAX | (RB_MARKER_MAX - 1)), (void *)buf) != 0)
		return 0;
	if (bpf_ringbuf_output(&rb, m, sizeof(m->h) + 8 + (n &
	    (RB_MARKER_MAX | (RB_MARKER_MAX - 1))), RB_FLAGS) != 0)
		lost_one();
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs *regs, long id)
{
	__u64 pt = bpf_get_current_pid_tgid();

	if ((__u32)(pt >> 32) == self_tgid)
		return 0;
	SCOPE(cur_in());
	EMIT(6, RB_SYS_ENTER, (__u32)pt, (__u64)id, regs->di,
	    regs->si, regs->dx,
	    regs->r10, regs->r8);
	return 0;
}

/* A result that says "not now, try again" (engine/diag-poll.c). */
static __always_inline int
try_again(long nr, long ret)
{
	if (ret == -EAGAIN || ret == -EBUSY || ret == -EALREADY)
		return 1;
	return nr == NR_connect && (ret == -ECONNREFUSED ||
	    ret == -ENOENT || ret == -EINPROGRESS);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pt;
	struct task_struct *t;
	long nr;
	int k;

	if ((__u32)(pt >> 32) == self_tgid)
		return 0;
	SCOPE(cur_in());
	nr = regs->orig_ax;
	if (marker_exit) {
		if (nr != NR_write || ret <= 0)
			return 0;
		goto marker;
	}
	if (full) {
		EMIT(2, RB_SYS_EXIT, tid, (__u64)nr, (__u64)ret);
		goto marker;
	}
	t = bpf_get_current_task_btf();
	if (blocking) {
		struct blk *b = bpf_task_storage_get(&blocked, t, 0, 0);

		if (b && b->on) {
			b->on = 0;
			b->retry = timed_out(nr, ret) ? RETRY_WINDOW : 0;
			EMIT(2, RB_SYS_EXIT, tid, (__u64)nr, (__u64)ret);
			if (stack_ns)
				wait_stack(ctx, b, tid,
				    bpf_ktime_get_boot_ns(), nr, ret);
			goto marker;
		}
		if (nr == NR_close) {
			/* a daemon may close every fd up to its limit: a
			   close that failed changed nothing */
			if (ret < 0)
				return 0;
			goto both;
		}
		if (nr == NR_sched_yield) {
			/* a yield loop: one kept a millisecond (a busy one
			   makes a million calls a second) */
			__u64 now = bpf_ktime_get_boot_ns();

			if (!b)
				b = bpf_task_storage_get(&blocked, t, 0,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
			if (b && now - b->yield_ts < YIELD_GAP_NS)
				return 0;
			if (b)
				b->yield_ts = now;
			goto both;
		}
		if (b && b->retry) {
			b->retry--;
			if (ret < 0 && try_again(nr, ret)) {
				b->retry = 0;
				goto both;
			}
		}
	}
	if (nr != NR_read && nr != NR_write && nr != NR_readv &&
	    nr != NR_writev)
		return 0;
	k = fd_kind(t, regs->di);

	if (k == 3 && nr == NR_write && ret > 0)
		return emit_marker(tid, regs->si, ret);
	if (!blocking || (k != 1 && k != 2))
		return 0;
both:
	EMIT(6, RB_SYS_ENTER, tid, (__u64)nr, regs->di,
	    regs->si, regs->dx,
	    regs->r10, regs->r8);
	EMIT(2, RB_SYS_EXIT, tid, (__u64)nr, (__u64)ret);
	return 0;
marker:
	if (nr == NR_write && ret > 0 && marker_write_fn &&
	    fd_kind(bpf_get_current_task_btf(), regs->di) == 3)
		return emit_marker(tid, regs->si, ret);
	return 0;
}

static __always_inline int
filelock(__u64 op, struct inode *inode, struct file_lock *fl, int ret)
{
	SCOPE(cur_in());
	__u64 type = 0, owner = 0;
	struct pt_regs *regs = NULL;
	__u32 tid = cur_tid();

	/* lean: a lock attempt refused at once (flock LOCK_NB, F_SETLK)
	   is a polling attempt, kept as its call: entry, lock, exit */
	if (lean && ret == -EAGAIN && op <= 2 && ctx_now() == 0) {
		struct task_struct *t = bpf_get_current_task_btf();
		struct blk *b = bpf_task_storage_get(&blocked, t, 0, 0);

		regs = (struct pt_regs *)bpf_task_pt_regs(t);
		if ((b && b->on) || regs->ax != -ENOSYS ||
		    (regs->orig_ax != NR_flock && regs->orig_ax != NR_fcntl)) {
			regs = NULL;
		} else {
			fd_check(t, regs->di);
			EMIT(6, RB_SYS_ENTER, tid, (__u64)regs->orig_ax,
			    regs->di, regs->si, regs->dx, regs->r10, regs->r8);
		}
	}
	if (fl) {
		type = (__u64)BPF_CORE_READ(fl, c.flc_type) |
		    (__u64)BPF_CORE_READ(fl, c.flc_flags) << 8;
		owner = (__u64)BPF_CORE_READ(fl, c.flc_owner);
	}
	EMIT(6, RB_FILELOCK, tid, op,
	    inode ? (__u64)BPF_CORE_READ(inode, i_ino) : 0,
	    inode ? (__u64)BPF_CORE_READ(inode, i_sb, s_dev) : 0, type,
	    (__u64)(__s64)ret, owner);
	if (regs)
		EMIT(2, RB_SYS_EXIT, tid, (__u64)regs->orig_ax,
		    (__u64)(__s64)ret);
	return 0;
}

SEC("tp_btf/posix_lock_inode")
int BPF_PROG(on_posix_lock, struct inode *inode, struct file_lock *fl, int ret)
{
	return filelock(1, inode, fl, ret);
}

SEC("tp_btf/flock_lock_inode")
int BPF_PROG(on_flock_lock, struct inode *inode, struct file_lock *fl, int ret)
{
	return filelock(2, inode, fl, ret);
}

SEC("tp_btf/fcntl_setlk")
int BPF_PROG(on_fcntl_setlk, struct inode *inode, struct file_lock *fl, int ret)
{
	return filelock(3, inode, fl, ret);
}

SEC("tp_btf/locks_remove_posix")
int BPF_PROG(on_remove_posix, struct inode *inode, struct file_lock *fl,
    int ret)
{
	return filelock(4, inode, fl, ret);
}
