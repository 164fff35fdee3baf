/* check.h - the smallest assertion kit for the C unit tests.
 *
 * CHECK(cond) counts a pass, or counts a failure and prints it with its
 * file and line; testing goes on either way. `return CHECK_SUMMARY();` at
 * the end of main prints "N passed, N failed" and makes the exit status
 * non-zero when anything failed. Include it from one test file only.
 */
#ifndef O2M_CHECK_H
#define O2M_CHECK_H

#include <stdio.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                         \
  do {                                                                      \
    if (cond) {                                                             \
      check_passed++;                                                       \
    } else {                                                                \
      check_failed++;                                                       \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__,      \
              #cond);                                                       \
    }                                                                       \
  } while (0)

#define CHECK_SUMMARY()                                                     \
  (printf("%d passed, %d failed\n", check_passed, check_failed),            \
   check_failed != 0)

#endif
