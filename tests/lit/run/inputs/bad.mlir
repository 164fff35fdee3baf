// @main returns an i32 where it declares none: MLIR rejects it on parsing.
func.func @main() {
  %0 = arith.constant 1 : i32
  return %0 : i32
}
