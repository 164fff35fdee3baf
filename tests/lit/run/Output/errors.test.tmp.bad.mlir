func.func @main() {
  