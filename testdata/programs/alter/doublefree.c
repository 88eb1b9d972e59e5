/* doublefree.c: a buffer is freed in cleanup() and then again (line 19);
   glibc detects the double free and aborts. Suppressing the second free()
   call (the call on line 19) makes the run end normally (exit 0). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char* buf;

static void cleanup(void) {
   free(buf);
}

int main(void) {
   buf = malloc(32);
   strcpy(buf, "hello");
   printf("%s\n", buf);
   cleanup();
   free(buf);
   printf("done\n");
   return 0;
}
