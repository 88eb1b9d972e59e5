/* dl_dropped_return.c: definite leak: a function's malloc'd result is
   dropped by its caller.

   make_label() returns a strdup'd label (the root and the symptom:
   strdup's allocation, on the line that calls it). label_width() asks for
   a label only to measure it and never frees it; it is called three
   times, so three blocks leak.

   Output: "width 7", "width 7", "width 8". */
// expect: definite_leak
// memcheck: yes
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static char *make_label(int i)
{
    char tmp[32];
    snprintf(tmp, sizeof tmp, "item-%02d", i);
    return strdup(tmp); //@ bug=definite_leak root=definite_leak
}

__attribute__((noinline)) static size_t label_width(int i)
{
    return strlen(make_label(i));
}

int main(void)
{
    printf("width %zu\n", label_width(1));
    printf("width %zu\n", label_width(42));
    printf("width %zu\n", label_width(100));
    return 0;
}
