/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scope.bpf.h: which events a scoped recorder keeps (included once, by
 * record.bpf.c, after ctx_now() and bpf_rdonly_cast).
 *
 * A recorder scoped to a network namespace (argus record --netns, as
 * one host of several on one machine), to a cgroup v2 subtree (--cgroup,
 * a container or a service), or to both (a task then has to be inside
 * both) keeps the events of the tasks inside, of kernel threads (they
 * serve every task) and of interrupt contexts; a switch when either task
 * is inside, a wake-up when the waker or the wakee is, a data-ready when
 * its socket is. Nothing set: every task.
 *
 * Data: rodata values set by the loader, and one pointer per scope
 * learned from the first task met inside (a load to compare rather than
 * a chain). Both objects stay alive while recording, so a pointer
 * learned never names another one: the loader holds the namespace open,
 * and the cgroup in the map scope_cgs (a cgroup array holds a reference
 * to its cgroups; removed while recorded, the cgroup is not freed).
 */
#ifndef ARGUS_SCOPE_BPF_H
#define ARGUS_SCOPE_BPF_H

const volatile __u32 scope_netns;	/* namespace inode; 0: none */
const volatile __u64 scope_cgroup;	/* cgroup id (its directory's
					   inode); 0: none */
const volatile __u32 scope_cglevel;	/* its depth below the root (the
					   root's children: 1) */

/* Either scope set: the checks are compiled out when neither is. */
#define SCOPED (scope_netns != 0 || scope_cgroup != 0)

/* The namespace's struct net and the scope's struct cgroup, once a task
   inside was met. */
static struct net *scope_net;
static struct cgroup *scope_cg;

/* Slot 0: the scope's cgroup, held (the programs never read it). */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} scope_cgs SEC(".maps");

/* Is cgroup c the scope cgroup or one of its descendants? Its ancestor
   at the scope's level is the one. c may be NULL (a socket without one):
   outside. A task of the scope cgroup itself costs one compare; one
   below it or outside, two loads more. c->ancestors[] lies past the end
   of struct cgroup as BTF sizes it, where the verifier refuses a load:
   the slot is read as the first field of a struct that begins with a
   struct cgroup * (the cast is a move once verified; no helper call). */
static __always_inline int
cg_in(struct cgroup *c)
{
	struct cgrp_cset_link *slot;
	struct cgroup *a;

	if (!c)
		return 0;
	if (c == scope_cg)
		return 1;
	if (c->level < (int)scope_cglevel)
		return 0;
	slot = bpf_rdonly_cast(&c->ancestors[scope_cglevel],
	    bpf_core_type_id_kernel(struct cgrp_cset_link));
	a = slot->cgrp;
	if (a == scope_cg)
		return 1;
	/* learned: another cgroup; else the scope's when its id is */
	if (scope_cg || !a || a->kn->id != scope_cgroup)
		return 0;
	scope_cg = a;
	return 1;
}

/* Is network namespace n the scope's? */
static __always_inline int
net_in(struct net *n)
{
	if (n == scope_net)
		return 1;
	if (!n || n->ns.inum != scope_netns)
		return 0;
	scope_net = n;
	return 1;
}

/* Task t's events are kept: no scope, a kernel thread, or a task inside
   every scope set. */
static __always_inline int
task_in(struct task_struct *t)
{
	struct nsproxy *ns;

	if (!SCOPED || !t || (t->flags & PF_KTHREAD))
		return 1;
	if (scope_netns) {
		ns = t->nsproxy;
		/* NULL: exiting, its last events are kept */
		if (ns && !net_in(ns->net_ns))
			return 0;
	}
	if (scope_cgroup && !cg_in(t->cgroups->dfl_cgrp))
		return 0;
	return 1;
}

/* The current context's events are kept: a task's inside the scope, or
   an interrupt's (looked at only for a task outside: a map lookup). */
static __always_inline int
cur_in(void)
{
	if (!SCOPED || task_in(bpf_get_current_task_btf()))
		return 1;
	return ctx_now() != 0;
}

/* Socket sk is inside every scope set: its namespace, the cgroup of the
   task that made it. */
static __always_inline int
sk_in(struct sock *sk)
{
	if (scope_netns && !net_in(sk->__sk_common.skc_net.net))
		return 0;
	if (scope_cgroup && !cg_in(sk->sk_cgrp_data.cgroup))
		return 0;
	return 1;
}

/* Leave the program when cond says the event is outside the scope. */
#define SCOPE(cond) do { \
	if (SCOPED && !(cond)) \
		return 0; \
} while (0)

#endif
