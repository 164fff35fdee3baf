/* core.h - model-level operations the CLI and the executor share that are
 * not part of the public API yet. */
#ifndef O2M_CORE_H
#define O2M_CORE_H

#include "ir/ir.h"

/* Gives the main graph's runtime inputs (graph inputs without initializer,
 * in order) the exact dims of `inputs` and infers the model again, so that
 * every shape computable from them becomes static. A dtype or rank that
 * contradicts the declared input type, or a wrong count, is an error
 * naming the input. */
o2m_status o2m_specialize_inputs(o2m_model *model, int n_inputs,
                                 const o2m_tensor *const *inputs,
                                 o2m_diag *diag);

/* o2m_specialize_inputs for inputs given as values (sequences, optionals:
 * onnx/value_file.h): a sequence input gets the merged type of its
 * elements, an optional the type of what it holds. */
struct o2m_io_value;
o2m_status o2m_specialize_values(o2m_model *model, int n_inputs, const struct o2m_io_value *inputs,
                                 o2m_diag *diag);

/* The generic form of o2m_specialize_inputs: only the inputs that act
 * as parameters (axes, shapes, sizes: their every use is one) get the
 * static type and the value of theirs in `inputs`; the others keep their
 * declared types, dynamic dims dynamic. Then the model is inferred again. */
o2m_status o2m_specialize_parameters(o2m_model *model, int n_inputs, const o2m_tensor *const *inputs,
                                     o2m_diag *diag);
/* Whether runtime input `index`, given as `t`, acts only as a parameter
 * (its value is folded into the code when specialising). */
int o2m_input_is_parameter(const o2m_model *model, int index, const o2m_tensor *t);

/* The main graph's runtime inputs (graph inputs without initializer):
 * their count, and the i-th one. */
int o2m_runtime_input_count(const o2m_model *model);
o2m_value *o2m_runtime_input(const o2m_model *model, int i);

#endif
