/* test_shlo_check.c - unit test of the StableHLO spec checker
 * (src/emit/stablehlo/shlo_check.c): small generic-form modules it must
 * accept, one per rule family, and broken ones it must reject with a
 * message naming the rule. */
#include <stdlib.h>
#include <string.h>

#include <mlir-c/Dialect/Func.h>
#include <mlir-c/IR.h>

#include "../unit/check.h"
#include "emit/stablehlo/shlo_check.h"

static MlirContext ctx;
static o2m_diag diag;

/* A func.func @main of signature `sig` whose block takes `args` and holds `body`. */
#define FUNC(sig, args, body)                                                                      \
  "\"func.func\"() <{function_type = " sig ", sym_name = \"main\"}> ({\n^bb0(" args "):\n" body     \
  "}) : () -> ()\n"

/* Parses `text` and checks it: O2M_OK, O2M_ERR_INVALID, or -1 when it does not parse. */
static int check(const char *text) {
  memset(&diag, 0, sizeof(diag));
  MlirModule m = mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(text));
  if (mlirModuleIsNull(m)) return -1;
  o2m_status s = o2m_shlo_check_module(m, &diag);
  mlirModuleDestroy(m);
  return (int)s;
}

static int accepts(const char *text) {
  int s = check(text);
  if (s != O2M_OK) fprintf(stderr, "rejected (%d): %s\n", s, diag.message);
  return s == O2M_OK;
}

/* Rejected, with `word` in the message. */
static int rejects(const char *text, const char *word) {
  int s = check(text);
  if (s != O2M_ERR_INVALID || !strstr(diag.message, word)) {
    fprintf(stderr, "expected a rejection naming '%s'; got %d: %s\n", word, s, diag.message);
    return 0;
  }
  if (getenv("SHLO_VERBOSE")) fprintf(stderr, "ok: %s\n", diag.message);
  return 1;
}

/* ---- accepted ------------------------------------------------------------ */

static const char elementwise_ok[] = FUNC(
    "(tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>",
    "%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %v: tensor<3xf32>",
    "  %0 = \"stablehlo.add\"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>\n"
    "  %1 = \"stablehlo.exponential\"(%0) {mhlo.sharding = \"{replicated}\"} : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
    "  %2 = \"stablehlo.compare\"(%1, %b) {comparison_direction = #stablehlo<comparison_direction GT>,"
    " compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>\n"
    "  %3 = \"stablehlo.broadcast_in_dim\"(%v) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>\n"
    "  %4 = \"stablehlo.select\"(%2, %1, %3) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>\n"
    "  %5 = \"stablehlo.abs\"(%4) : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
    "  %6 = \"stablehlo.convert\"(%5) : (tensor<2x3xf32>) -> tensor<2x3xi32>\n"
    "  %7 = \"stablehlo.bitcast_convert\"(%a) : (tensor<2x3xf32>) -> tensor<2x3x4xi8>\n"
    "  \"func.return\"(%5) : (tensor<2x3xf32>) -> ()\n");

static const char shapes_ok[] = FUNC(
    "(tensor<2x3xf32>, tensor<f32>, tensor<i32>) -> tensor<3x2xf32>",
    "%a: tensor<2x3xf32>, %z: tensor<f32>, %i: tensor<i32>",
    "  %0 = \"stablehlo.transpose\"(%a) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
    "  %1 = \"stablehlo.reshape\"(%a) : (tensor<2x3xf32>) -> tensor<6xf32>\n"
    "  %2 = \"stablehlo.concatenate\"(%a, %a) {dimension = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>\n"
    "  %3 = \"stablehlo.slice\"(%2) {start_indices = array<i64: 1, 0>, limit_indices = array<i64: 4, 3>,"
    " strides = array<i64: 2, 1>} : (tensor<4x3xf32>) -> tensor<2x3xf32>\n"
    "  %4 = \"stablehlo.pad\"(%a, %z) {edge_padding_low = array<i64: 1, 0>, edge_padding_high = array<i64: 0, 2>,"
    " interior_padding = array<i64: 1, 0>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x5xf32>\n"
    "  %5 = \"stablehlo.iota\"() {iota_dimension = 1 : i64} : () -> tensor<2x3xi32>\n"
    "  %6 = \"stablehlo.reverse\"(%a) {dimensions = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
    "  %7 = \"stablehlo.get_dimension_size\"(%a) {dimension = 1 : i64} : (tensor<2x3xf32>) -> tensor<i32>\n"
    "  %8 = \"stablehlo.dynamic_slice\"(%a, %i, %i) {slice_sizes = array<i64: 1, 2>} : (tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>\n"
    "  %9 = \"stablehlo.constant\"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>\n"
    "  %10 = \"stablehlo.clamp\"(%z, %a, %z) : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>\n"
    "  \"func.return\"(%0) : (tensor<3x2xf32>) -> ()\n");

static const char contractions_ok[] = FUNC(
    "(tensor<4x2x3xf32>, tensor<4x3x5xf32>, tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<5x4xf32>, tensor<2x1xi32>)"
    " -> tensor<4x2x5xf32>",
    "%l: tensor<4x2x3xf32>, %r: tensor<4x3x5xf32>, %x: tensor<1x3x8x8xf32>, %w: tensor<6x3x3x3xf32>,"
    " %t: tensor<5x4xf32>, %ix: tensor<2x1xi32>",
    "  %0 = \"stablehlo.dot_general\"(%l, %r) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0],"
    " rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>,"
    " precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}"
    " : (tensor<4x2x3xf32>, tensor<4x3x5xf32>) -> tensor<4x2x5xf32>\n"
    "  %1 = \"stablehlo.convolution\"(%x, %w) {batch_group_count = 1 : i64,"
    " dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, feature_group_count = 1 : i64,"
    " padding = dense<[[1, 1], [1, 1]]> : tensor<2x2xi64>, window_strides = array<i64: 2, 1>,"
    " rhs_dilation = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x4x8xf32>\n"
    "  %2 = \"stablehlo.gather\"(%t, %ix) {dimension_numbers = #stablehlo.gather<offset_dims = [1],"
    " collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false,"
    " slice_sizes = array<i64: 1, 4>} : (tensor<5x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>\n"
    "  \"func.return\"(%0) : (tensor<4x2x5xf32>) -> ()\n");

static const char reduce_ok[] = FUNC(
    "(tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>", "%a: tensor<2x3xf32>, %z: tensor<f32>",
    "  %0 = \"stablehlo.reduce\"(%a, %z) ({\n"
    "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "    %s = \"stablehlo.add\"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
    "    \"stablehlo.return\"(%s) : (tensor<f32>) -> ()\n"
    "  }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n"
    "  %1 = \"stablehlo.reduce_window\"(%a, %z) ({\n"
    "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "    %s = \"stablehlo.maximum\"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
    "    \"stablehlo.return\"(%s) : (tensor<f32>) -> ()\n"
    "  }) {window_dimensions = array<i64: 1, 2>, window_strides = array<i64: 1, 1>}"
    " : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x2xf32>\n"
    "  \"func.return\"(%0) : (tensor<2xf32>) -> ()\n");

static const char while_ok[] = FUNC(
    "(tensor<i64>, tensor<4xf32>) -> tensor<4xf32>", "%n: tensor<i64>, %v: tensor<4xf32>",
    "  %0:2 = \"stablehlo.while\"(%n, %v) ({\n"
    "  ^bb0(%i: tensor<i64>, %x: tensor<4xf32>):\n"
    "    %z = \"stablehlo.constant\"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>\n"
    "    %c = \"stablehlo.compare\"(%i, %z) {comparison_direction = #stablehlo<comparison_direction GT>}"
    " : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "    \"stablehlo.return\"(%c) : (tensor<i1>) -> ()\n"
    "  }, {\n"
    "  ^bb0(%i: tensor<i64>, %x: tensor<4xf32>):\n"
    "    %one = \"stablehlo.constant\"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>\n"
    "    %j = \"stablehlo.subtract\"(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "    %y = \"stablehlo.add\"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
    "    \"stablehlo.return\"(%j, %y) : (tensor<i64>, tensor<4xf32>) -> ()\n"
    "  }) : (tensor<i64>, tensor<4xf32>) -> (tensor<i64>, tensor<4xf32>)\n"
    "  \"func.return\"(%0#1) : (tensor<4xf32>) -> ()\n");

static const char if_sort_ok[] = FUNC(
    "(tensor<i1>, tensor<4xf32>) -> tensor<4xf32>", "%p: tensor<i1>, %v: tensor<4xf32>",
    "  %0 = \"stablehlo.if\"(%p) ({\n"
    "    \"stablehlo.return\"(%v) : (tensor<4xf32>) -> ()\n"
    "  }, {\n"
    "    %n = \"stablehlo.negate\"(%v) : (tensor<4xf32>) -> tensor<4xf32>\n"
    "    \"stablehlo.return\"(%n) : (tensor<4xf32>) -> ()\n"
    "  }) : (tensor<i1>) -> tensor<4xf32>\n"
    "  %1 = \"stablehlo.sort\"(%0) ({\n"
    "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "    %c = \"stablehlo.compare\"(%x, %y) {comparison_direction = #stablehlo<comparison_direction LT>}"
    " : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
    "    \"stablehlo.return\"(%c) : (tensor<i1>) -> ()\n"
    "  }) {dimension = 0 : i64, is_stable = true} : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  \"func.return\"(%1) : (tensor<4xf32>) -> ()\n");

static const char misc_ok[] = FUNC(
    "(tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>, tensor<i32>, tensor<3xf32>, tensor<8xf32>) -> tensor<4x3xf32>",
    "%a: tensor<4x3xf32>, %ix: tensor<2x1xi32>, %u: tensor<2x3xf32>, %k: tensor<i32>, %s: tensor<3xf32>,"
    " %r: tensor<8xf32>",
    "  %0 = \"stablehlo.scatter\"(%a, %ix, %u) ({\n"
    "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "    %t = \"stablehlo.add\"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
    "    \"stablehlo.return\"(%t) : (tensor<f32>) -> ()\n"
    "  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0],"
    " scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}"
    " : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>\n"
    "  %1 = \"stablehlo.case\"(%k) ({\n"
    "    \"stablehlo.return\"(%0) : (tensor<4x3xf32>) -> ()\n"
    "  }, {\n"
    "    \"stablehlo.return\"(%a) : (tensor<4x3xf32>) -> ()\n"
    "  }) : (tensor<i32>) -> tensor<4x3xf32>\n"
    "  %2 = \"stablehlo.batch_norm_inference\"(%1, %s, %s, %s, %s) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64}"
    " : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>\n"
    "  %3 = \"stablehlo.fft\"(%r) {fft_type = #stablehlo<fft_type RFFT>, fft_length = array<i64: 8>}"
    " : (tensor<8xf32>) -> tensor<5xcomplex<f32>>\n"
    "  %4 = \"stablehlo.real\"(%3) : (tensor<5xcomplex<f32>>) -> tensor<5xf32>\n"
    "  %5 = \"stablehlo.tanh\"(%4) {result_accuracy = #stablehlo.result_accuracy<mode = "
    "#stablehlo.result_accuracy_mode<DEFAULT>>} : (tensor<5xf32>) -> tensor<5xf32>\n"
    "  %6:2 = \"stablehlo.optimization_barrier\"(%2, %k) : (tensor<4x3xf32>, tensor<i32>) -> (tensor<4x3xf32>, tensor<i32>)\n"
    "  %7 = \"stablehlo.dynamic_update_slice\"(%a, %u, %k, %k) : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<i32>,"
    " tensor<i32>) -> tensor<4x3xf32>\n"
    "  %8 = \"stablehlo.reshape\"(%a) : (tensor<4x3xf32>) -> tensor<?x3xf32>\n"
    "  %9 = \"stablehlo.constant\"() {value = dense<[4, 3]> : tensor<2xi64>} : () -> tensor<2xi64>\n"
    "  %10 = \"stablehlo.dynamic_broadcast_in_dim\"(%s, %9) {broadcast_dimensions = array<i64: 1>}"
    " : (tensor<3xf32>, tensor<2xi64>) -> tensor<?x3xf32>\n"
    "  %11 = \"stablehlo.compare\"(%a, %a) {comparison_direction = #stablehlo<comparison_direction EQ>}"
    " : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>\n"
    "  %12 = \"stablehlo.constant\"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>\n"
    "  %13 = \"stablehlo.reduce\"(%11, %12) ({\n"
    "  ^bb0(%x: tensor<i1>, %y: tensor<i1>):\n"
    "    %t = \"stablehlo.and\"(%x, %y) : (tensor<i1>, tensor<i1>) -> tensor<i1>\n"
    "    \"stablehlo.return\"(%t) : (tensor<i1>) -> ()\n"
    "  }) {dimensions = array<i64: 0, 1>} : (tensor<4x3xi1>, tensor<i1>) -> tensor<i1>\n"
    "  %14 = \"stablehlo.reshape\"(%a) : (tensor<4x3xf32>) -> tensor<1x4x3x1xf32>\n"
    "  %15 = \"stablehlo.convolution\"(%14, %14) {batch_group_count = 1 : i64, feature_group_count = 1 : i64,"
    " dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3,"
    " input_spatial_dimensions = [1, 2], kernel_input_feature_dimension = 3, kernel_output_feature_dimension = 0,"
    " kernel_spatial_dimensions = [1, 2], output_batch_dimension = 0, output_feature_dimension = 3,"
    " output_spatial_dimensions = [1, 2]>} : (tensor<1x4x3x1xf32>, tensor<1x4x3x1xf32>) -> tensor<1x1x1x1xf32>\n"
    "  \"func.return\"(%6#0) : (tensor<4x3xf32>) -> ()\n");

/* ---- rejected ------------------------------------------------------------ */

#define ONE_OP(sig, args, op, ret)                                                                 \
  FUNC(sig, args, "  %0 = " op "\n  \"func.return\"(%0) : (" ret ") -> ()\n")

static const char unknown_op[] = ONE_OP("(tensor<2xf32>) -> tensor<2xf32>", "%a: tensor<2xf32>",
    "\"stablehlo.frobnicate\"(%a) : (tensor<2xf32>) -> tensor<2xf32>", "tensor<2xf32>");

static const char wrong_kind[] = ONE_OP("() -> tensor<4xi32>", "",
    "\"stablehlo.iota\"() {iota_dimension = 0 : i32} : () -> tensor<4xi32>", "tensor<4xi32>");

static const char wrong_mnemonic[] = ONE_OP("(tensor<2xf32>) -> tensor<2xi1>", "%a: tensor<2xf32>",
    "\"stablehlo.compare\"(%a, %a) {comparison_direction = #stablehlo<comparison_type FLOAT>}"
    " : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>", "tensor<2xi1>");

static const char missing_attr[] = ONE_OP("(tensor<2xf32>) -> tensor<2xi1>", "%a: tensor<2xf32>",
    "\"stablehlo.compare\"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>", "tensor<2xi1>");

static const char extra_attr[] = ONE_OP("(tensor<2xf32>) -> tensor<2xf32>", "%a: tensor<2xf32>",
    "\"stablehlo.add\"(%a, %a) {fast = true} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>", "tensor<2xf32>");

static const char bad_add[] = ONE_OP("(tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>",
    "%a: tensor<2xf32>, %b: tensor<3xf32>",
    "\"stablehlo.add\"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>", "tensor<2xf32>");

static const char bad_count[] = ONE_OP("(tensor<2xf32>) -> tensor<2xf32>", "%a: tensor<2xf32>",
    "\"stablehlo.negate\"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>", "tensor<2xf32>");

static const char bad_broadcast[] = ONE_OP("(tensor<3xf32>) -> tensor<3x2xf32>", "%a: tensor<3xf32>",
    "\"stablehlo.broadcast_in_dim\"(%a) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<3x2xf32>",
    "tensor<3x2xf32>");

static const char bad_transpose[] = ONE_OP("(tensor<2x3xf32>) -> tensor<2x3xf32>", "%a: tensor<2x3xf32>",
    "\"stablehlo.transpose\"(%a) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>",
    "tensor<2x3xf32>");

static const char bad_slice[] = ONE_OP("(tensor<8xf32>) -> tensor<3xf32>", "%a: tensor<8xf32>",
    "\"stablehlo.slice\"(%a) {start_indices = array<i64: 1>, limit_indices = array<i64: 8>, strides = array<i64: 2>}"
    " : (tensor<8xf32>) -> tensor<3xf32>", "tensor<3xf32>");

static const char bad_dot[] = ONE_OP("(tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x4xf32>",
    "%l: tensor<2x3xf32>, %r: tensor<3x5xf32>",
    "\"stablehlo.dot_general\"(%l, %r) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1],"
    " rhs_contracting_dimensions = [0]>} : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x4xf32>", "tensor<2x4xf32>");

static const char bad_conv[] = ONE_OP("(tensor<1x3x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>",
    "%x: tensor<1x3x8x8xf32>, %w: tensor<6x4x3x3xf32>",
    "\"stablehlo.convolution\"(%x, %w) {batch_group_count = 1 : i64,"
    " dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, feature_group_count = 1 : i64}"
    " : (tensor<1x3x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>", "tensor<1x6x6x6xf32>");

static const char bad_reduce_body[] = FUNC(
    "(tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>", "%a: tensor<2x3xf32>, %z: tensor<f32>",
    "  %0 = \"stablehlo.reduce\"(%a, %z) ({\n"
    "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "    %s = \"stablehlo.add\"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
    "    %t = \"stablehlo.add\"(%s, %s) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
    "  }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n"
    "  \"func.return\"(%0) : (tensor<2xf32>) -> ()\n");

static const char bad_reduce_shape[] = FUNC(
    "(tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>", "%a: tensor<2x3xf32>, %z: tensor<f32>",
    "  %0 = \"stablehlo.reduce\"(%a, %z) ({\n"
    "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "    %s = \"stablehlo.add\"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
    "    \"stablehlo.return\"(%s) : (tensor<f32>) -> ()\n"
    "  }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>\n"
    "  \"func.return\"(%0) : (tensor<3xf32>) -> ()\n");

static const char bad_while_cond[] = FUNC(
    "(tensor<i64>) -> tensor<i64>", "%n: tensor<i64>",
    "  %0 = \"stablehlo.while\"(%n) ({\n"
    "  ^bb0(%i: tensor<i64>):\n"
    "    \"stablehlo.return\"(%i) : (tensor<i64>) -> ()\n"
    "  }, {\n"
    "  ^bb0(%i: tensor<i64>):\n"
    "    \"stablehlo.return\"(%i) : (tensor<i64>) -> ()\n"
    "  }) : (tensor<i64>) -> tensor<i64>\n"
    "  \"func.return\"(%0) : (tensor<i64>) -> ()\n");

static const char bad_select[] = ONE_OP("(tensor<2xf32>) -> tensor<2xf32>", "%a: tensor<2xf32>",
    "\"stablehlo.select\"(%a, %a, %a) : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>",
    "tensor<2xf32>");

static const char bad_concat[] = ONE_OP("(tensor<2x3xf32>) -> tensor<5x3xf32>", "%a: tensor<2x3xf32>",
    "\"stablehlo.concatenate\"(%a, %a) {dimension = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>",
    "tensor<5x3xf32>");

static const char bad_gather[] = ONE_OP("(tensor<5x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>",
    "%t: tensor<5x4xf32>, %ix: tensor<2x1xi32>",
    "\"stablehlo.gather\"(%t, %ix) {dimension_numbers = #stablehlo.gather<offset_dims = [1],"
    " collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 3>,"
    " slice_sizes = array<i64: 1, 4>} : (tensor<5x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>", "tensor<2x4xf32>");

static const char bad_dim_size[] = ONE_OP("(tensor<2xf32>) -> tensor<i64>", "%a: tensor<2xf32>",
    "\"stablehlo.get_dimension_size\"(%a) {dimension = 0 : i64} : (tensor<2xf32>) -> tensor<i64>", "tensor<i64>");

static const char bad_if[] = FUNC(
    "(tensor<i1>, tensor<4xf32>) -> tensor<4xf32>", "%p: tensor<i1>, %v: tensor<4xf32>",
    "  %0 = \"stablehlo.if\"(%p) ({\n"
    "    \"stablehlo.return\"(%v) : (tensor<4xf32>) -> ()\n"
    "  }, {\n"
    "    \"stablehlo.return\"(%p) : (tensor<i1>) -> ()\n"
    "  }) : (tensor<i1>) -> tensor<4xf32>\n"
    "  \"func.return\"(%0) : (tensor<4xf32>) -> ()\n");

int main(void) {
  ctx = mlirContextCreate();
  mlirContextSetAllowUnregisteredDialects(ctx, true);
  mlirDialectHandleLoadDialect(mlirGetDialectHandle__func__(), ctx);

  CHECK(accepts(elementwise_ok));
  CHECK(accepts(shapes_ok));
  CHECK(accepts(contractions_ok));
  CHECK(accepts(reduce_ok));
  CHECK(accepts(while_ok));
  CHECK(accepts(if_sort_ok));
  CHECK(accepts(misc_ok));

  CHECK(rejects(unknown_op, "unknown op"));
  CHECK(rejects(unknown_op, "stablehlo.frobnicate"));
  CHECK(rejects(wrong_kind, "iota_dimension"));
  CHECK(rejects(wrong_kind, "i64"));
  CHECK(rejects(wrong_mnemonic, "comparison_direction"));
  CHECK(rejects(missing_attr, "missing"));
  CHECK(rejects(extra_attr, "fast"));
  CHECK(rejects(bad_add, "shape"));
  CHECK(rejects(bad_count, "operands"));
  CHECK(rejects(bad_broadcast, "must be 1 or equal"));
  CHECK(rejects(bad_transpose, "result dim"));
  CHECK(rejects(bad_slice, "ceil"));
  CHECK(rejects(bad_dot, "result shape"));
  CHECK(rejects(bad_conv, "input feature"));
  CHECK(rejects(bad_reduce_body, "stablehlo.return"));
  CHECK(rejects(bad_reduce_shape, "reduced dimensions"));
  CHECK(rejects(bad_while_cond, "tensor<i1>"));
  CHECK(rejects(bad_select, "pred"));
  CHECK(rejects(bad_concat, "sum"));
  CHECK(rejects(bad_gather, "index_vector_dim"));
  CHECK(rejects(bad_dim_size, "tensor<i32>"));
  CHECK(rejects(bad_if, "region #1"));

  mlirContextDestroy(ctx);
  return CHECK_SUMMARY();
}
