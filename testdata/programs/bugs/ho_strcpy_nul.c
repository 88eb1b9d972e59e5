/* ho_strcpy_nul.c: heap buffer overflow by the terminating NUL: a copy
   allocated with strlen(s) instead of strlen(s) + 1.

   dup_name() allocates strlen(s) bytes (the root) and strcpy's the name
   into it (the symptom: the NUL lands one byte past the end; the store
   is done by libc's strcpy, called from this line, and glibc's
   vectorised strcpy writes the tail with an overlapping store that
   straddles the end). Natively the byte lands in the slack of glibc's
   chunk (11 bytes asked, 24 usable), so nothing visible breaks. main
   reads back only the 11 bytes inside the block.

   Output: "name ocelot-lynx len 11". */
// expect: heap_buffer_overflow
// memcheck: yes
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static char *dup_name(const char *s)
{
    char *d = malloc(strlen(s)); //@ root=heap_buffer_overflow
    strcpy(d, s); //@ bug=heap_buffer_overflow
    return d;
}

int main(void)
{
    const char *src = "ocelot-lynx";
    size_t len = strlen(src);
    char *name = dup_name(src);

    /* Only the len bytes inside the block are read back. */
    printf("name %.*s len %zu\n", (int)len, name, len);
    free(name);
    return 0;
}
