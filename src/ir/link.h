/* link.h - linking and function inlining: from decoded names to the graph
 * IR of ir.h. */
#ifndef O2M_LINK_H
#define O2M_LINK_H

#include "ir/ir.h"

/* Replaces every call of a model-local function (in every graph and
 * subgraph) by the function's body, with its values renamed apart, its
 * formal inputs/outputs bound to the call's and its attribute references
 * resolved. Runs before linking. */
o2m_status o2m_inline_functions(o2m_model *model, o2m_diag *diag);

/* Links the main graph and every subgraph (see link.c). */
o2m_status o2m_link_model(o2m_model *model, o2m_diag *diag);

#endif
