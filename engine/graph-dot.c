/*
 * graph-dot.c: Graphviz output of a vertex's neighbourhood.
 *
 * A breadth-first walk over in- and out-edges up to a depth collects the
 * vertices (a hash set from vertex to its distance); every edge between
 * two collected vertices is then written, weak edges dashed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "engine-local.h"

static void
put_label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
}

void
graph_write_dot(const struct graph *g, uint32_t v, unsigned depth, FILE *f)
{
	struct hmap seen;
	uint32_t *q;
	size_t qn = 0, qh = 0, qcap = 64, k;
	char buf[256];

	fprintf(f, "digraph argus {\n\tnode [shape=box fontname=monospace];\n");
	if (v >= g->nvx) {
		fprintf(f, "}\n");
		return;
	}
	hmap_init(&seen);
	q = xmalloc(qcap * sizeof(*q));
	q[qn++] = v;
	*hmap_put(&seen, v, 0, NULL) = 0;
	while (qh < qn) {
		uint32_t u = q[qh++];
		uint64_t d = *hmap_get(&seen, u);
		if (d >= depth)
			continue;
		size_t ko, ki;
		const uint32_t *out = graph_out_edges(g, u, &ko);
		const uint32_t *in = graph_in_edges(g, u, &ki);
		for (size_t i = 0; i < ko + ki; i++) {
			uint32_t w = i < ko ? g->ed[out[i]].dst :
			    g->ed[in[i - ko]].src;
			int added;
			hmap_put(&seen, w, d + 1, &added);
			if (!added)
				continue;
			DGROW(q, qcap, qn + 1, 64);
			q[qn++] = w;
		}
	}
	for (size_t i = 0; i < qn; i++) {
		graph_vertex_describe(g, q[i], buf, sizeof(buf));
		fprintf(f, "\tv%u [label=\"", q[i]);
		put_label(f, buf);
		fprintf(f, "\"%s];\n", q[i] == v ? " style=bold color=red" :
		    "");
	}
	for (size_t i = 0; i < qn; i++) {
		const uint32_t *out = graph_out_edges(g, q[i], &k);
		for (size_t j = 0; j < k; j++) {
			const struct graph_edge *e = &g->ed[out[j]];
			if (hmap_get(&seen, e->dst) == NULL)
				continue;
			fprintf(f, "\tv%u -> v%u [label=\"%s\"%s];\n", q[i],
			    e->dst, graph_edge_kind_name(e->kind),
			    e->flags & GRAPH_EF_WEAK ? " style=dashed" : "");
		}
	}
	fprintf(f, "}\n");
	free(q);
	hmap_free(&seen);
}
