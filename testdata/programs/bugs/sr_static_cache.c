/* sr_static_cache.c: still reachable (the dissertation's possible leak): a function-local static cache,
   allocated on first use and never freed.

   format_id() keeps its output buffer in a static local, allocated the
   first time (the root and the symptom: the allocation of the block still
   allocated at exit) and reused by later calls. Nothing frees it.

   Output: "id-0001", "id-0002", "id-0003". */
// expect: still_reachable
// analyze: --all
// memcheck: no (still reachable: listed only with --show-leak-kinds=reachable, not an error)
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static const char *format_id(int id)
{
    static char *buf;
    if (buf == NULL)
        buf = malloc(16); //@ bug=still_reachable root=still_reachable
    snprintf(buf, 16, "id-%04d", id);
    return buf;
}

int main(void)
{
    for (int i = 1; i <= 3; i++)
        printf("%s\n", format_id(i));
    return 0;
}
