/* test_om_check.c - unit test of the onnx-mlir form checker
 * (src/emit/onnx/om_check.c) and of the version rule of its table
 * (om_table.c): modules in generic form it must accept, broken ones it
 * must reject with a message naming the rule, and op names per opset. */
#include <stdlib.h>
#include <string.h>

#include <mlir-c/Dialect/Func.h>
#include <mlir-c/IR.h>

#include "../unit/check.h"
#include "emit/onnx/om_check.h"
#include "util/diag.h"

static MlirContext ctx;
static o2m_diag diag;
static om_table table;

/* func.func @main_graph of signature `sig` (block arguments `args`, body
 * `body`) and the entry point naming it. */
#define MODULE(sig, args, body)                                                                    \
  "\"func.func\"() <{function_type = " sig ", sym_name = \"main_graph\"}> ({\n^bb0(" args "):\n"   \
  body "}) : () -> ()\n\"onnx.EntryPoint\"() <{func = @main_graph}> : () -> ()\n"

#define UNARY(op) MODULE("(tensor<2xf32>) -> tensor<2xf32>", "%x: tensor<2xf32>", \
  "  %0 = " op " : (tensor<2xf32>) -> tensor<2xf32>\n"                           \
  "  \"onnx.Return\"(%0) : (tensor<2xf32>) -> ()\n")

/* Parses `text` and checks it: O2M_OK, O2M_ERR_INVALID, or -1 when it does not parse. */
static int check(const char *text) {
  memset(&diag, 0, sizeof(diag));
  MlirModule m = mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(text));
  if (mlirModuleIsNull(m)) return -1;
  o2m_status s = om_check_module(m, &table, &diag);
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
  return 1;
}

static const char resize_ok[] = MODULE(
    "(tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<1x1x4x4xf32>",
    "%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>",
    "  %n = \"onnx.NoValue\"() : () -> none\n"
    "  %0 = \"onnx.Resize\"(%x, %n, %s, %n) <{antialias = 0 : si64, coordinate_transformation_mode ="
    " \"half_pixel\", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : si64,"
    " extrapolation_value = 0.0 : f32, keep_aspect_ratio_policy = \"stretch\", mode = \"linear\","
    " nearest_mode = \"round_prefer_floor\"}> {onnx_node_name = \"rz\"} : (tensor<1x1x2x2xf32>,"
    " none, tensor<4xf32>, none) -> tensor<1x1x4x4xf32>\n"
    "  \"onnx.Return\"(%0) : (tensor<1x1x4x4xf32>) -> ()\n");

static const char if_ok[] = MODULE(
    "(tensor<i1>, tensor<2xf32>) -> tensor<2xf32>", "%c: tensor<i1>, %x: tensor<2xf32>",
    "  %0 = \"onnx.If\"(%c) ({\n"
    "    %1 = \"onnx.Neg\"(%x) : (tensor<2xf32>) -> tensor<2xf32>\n"
    "    \"onnx.Yield\"(%1) : (tensor<2xf32>) -> ()\n"
    "  }, {\n"
    "    \"onnx.Yield\"(%x) : (tensor<2xf32>) -> ()\n"
    "  }) {output_names = [\"y\"]} : (tensor<i1>) -> tensor<2xf32>\n"
    "  %2 = \"onnx.Cast\"(%0) <{saturate = 1 : si64, to = f16}> : (tensor<2xf32>) -> tensor<2xf16>\n"
    "  %3 = \"onnx.Custom\"(%2) <{function_name = \"F\"}> {domain_name = \"x\"} : (tensor<2xf16>) -> tensor<2xf32>\n"
    "  \"onnx.Return\"(%3) : (tensor<2xf32>) -> ()\n");

static const char unknown_op[] = UNARY("\"onnx.Frobnicate\"(%x)");
static const char missing_default[] = UNARY("\"onnx.LeakyRelu\"(%x)");
static const char wrong_kind[] = UNARY("\"onnx.LeakyRelu\"(%x) <{alpha = 1 : si64}>");
static const char discardable[] = UNARY("\"onnx.LeakyRelu\"(%x) {alpha = 1.0 : f32}");
static const char few_operands[] = UNARY("\"onnx.Add\"(%x)");
static const char required_none[] = MODULE(
    "(tensor<2xf32>) -> tensor<2xf32>", "%x: tensor<2xf32>",
    "  %n = \"onnx.NoValue\"() : () -> none\n"
    "  %0 = \"onnx.Add\"(%x, %n) : (tensor<2xf32>, none) -> tensor<2xf32>\n"
    "  \"onnx.Return\"(%0) : (tensor<2xf32>) -> ()\n");
static const char missing_required[] = MODULE(
    "(tensor<2xf32>) -> tensor<2xi32>", "%x: tensor<2xf32>",
    "  %0 = \"onnx.Cast\"(%x) <{saturate = 1 : si64}> : (tensor<2xf32>) -> tensor<2xi32>\n"
    "  \"onnx.Return\"(%0) : (tensor<2xi32>) -> ()\n");
static const char bad_region[] = MODULE(
    "(tensor<i1>, tensor<2xf32>) -> tensor<2xf32>", "%c: tensor<i1>, %x: tensor<2xf32>",
    "  %0 = \"onnx.If\"(%c) ({\n"
    "    \"onnx.Return\"(%x) : (tensor<2xf32>) -> ()\n"
    "  }, {\n"
    "    \"onnx.Yield\"(%x) : (tensor<2xf32>) -> ()\n"
    "  }) : (tensor<i1>) -> tensor<2xf32>\n"
    "  \"onnx.Return\"(%0) : (tensor<2xf32>) -> ()\n");
static const char two_values[] = MODULE(
    "() -> tensor<2xf32>", "",
    "  %0 = \"onnx.Constant\"() <{value = dense<1.0> : tensor<2xf32>, value_float = 1.0 : f32}> :"
    " () -> tensor<2xf32>\n"
    "  \"onnx.Return\"(%0) : (tensor<2xf32>) -> ()\n");
static const char no_return[] = MODULE(
    "(tensor<2xf32>) -> tensor<2xf32>", "%x: tensor<2xf32>", "  \"func.return\"(%x) : (tensor<2xf32>) -> ()\n");
static const char return_type[] = MODULE(
    "(tensor<2xf32>) -> tensor<2xf32>", "%x: tensor<2xf32>",
    "  %0 = \"onnx.Cast\"(%x) <{saturate = 1 : si64, to = f16}> : (tensor<2xf32>) -> tensor<2xf16>\n"
    "  \"onnx.Return\"(%0) : (tensor<2xf16>) -> ()\n");
static const char no_entry[] =
    "\"func.func\"() <{function_type = () -> (), sym_name = \"main_graph\"}> ({\n"
    "  \"onnx.Return\"() : () -> ()\n}) : () -> ()\n";

static int named(const char *op, int opset, const char *want) {
  char buf[64];
  const char *got = om_versioned_name(op, opset, buf, sizeof(buf));
  if (strcmp(got, want) != 0) fprintf(stderr, "%s at opset %d: %s, not %s\n", op, opset, got, want);
  return strcmp(got, want) == 0;
}

int main(void) {
  ctx = mlirContextCreate();
  mlirContextSetAllowUnregisteredDialects(ctx, true);
  mlirDialectHandleLoadDialect(mlirGetDialectHandle__func__(), ctx);
  o2m_arena arena = {0};
  CHECK(om_table_init(&table, &arena) == 0);

  CHECK(accepts(resize_ok));
  CHECK(accepts(if_ok));
  CHECK(rejects(unknown_op, "onnx.Frobnicate"));
  CHECK(rejects(missing_default, "lacks attribute 'alpha'"));
  CHECK(rejects(wrong_kind, "'alpha' is not f32"));
  CHECK(rejects(discardable, "discardable"));
  CHECK(rejects(few_operands, "has 1 operands; the op has 2"));
  CHECK(rejects(required_none, "operand 1 ('B') is none"));
  CHECK(rejects(missing_required, "required attribute 'to'"));
  CHECK(rejects(bad_region, "onnx.Yield"));
  CHECK(rejects(two_values, "exactly one"));
  CHECK(rejects(no_return, "does not end in onnx.Return"));
  CHECK(rejects(return_type, "result type"));
  CHECK(rejects(no_entry, "onnx.EntryPoint"));

  /* The version rule of onnx-mlir's importer (GetImportVersionOfNode). */
  CHECK(named("Resize", 19, "Resize"));
  CHECK(named("Resize", 12, "ResizeV11"));
  CHECK(named("Upsample", 9, "Upsample"));
  CHECK(named("Upsample", 8, "UpsampleV7"));
  CHECK(named("Upsample", 1, "UpsampleV7"));
  CHECK(named("Pad", 19, "Pad"));
  CHECK(named("Pad", 18, "PadV18"));
  CHECK(named("Squeeze", 13, "Squeeze"));
  CHECK(named("ReduceMax", 12, "ReduceMaxV13"));
  CHECK(named("Add", 7, "Add"));

  o2m_arena_free(&arena);
  mlirContextDestroy(ctx);
  return CHECK_SUMMARY();
}
