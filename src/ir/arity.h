/* arity.h - a node's input and output counts against its op's schema
 * (arity.c). */
#ifndef O2M_ARITY_H
#define O2M_ARITY_H

#include <stddef.h>

#include "ir/ir.h"

/* 0 when node n, whose op version is op_version (the op table's for its
 * opset), has as many inputs and outputs as its schema allows and every
 * required input; else -1 with the reason in why ("input 1 'W' is
 * required but not given"). Versions the schemas do not know pass. */
int o2m_arity_check(const o2m_node *n, int op_version, char *why, size_t size);

#endif
