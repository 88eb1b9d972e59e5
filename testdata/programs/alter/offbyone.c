/* offbyone.c: an off-by-one guard: `idx > len` (line 12) should be
   `idx >= len`, so name_len(3) takes strlen of the table's NULL sentinel
   and crashes. Switching the guard's 4th instance (idx == 3) makes that
   call return -1 and the run ends normally. */
#include <stdio.h>
#include <string.h>

static const char* names[4] = {"zero", "one", "two", NULL};
static int len = 3;

static int name_len(int idx) {
   if (idx > len) {
      return -1;
   }
   return (int)strlen(names[idx]);
}

int main(void) {
   for (int i = 0; i < 5; i++) {
      printf("%d: %d\n", i, name_len(i));
   }
   return 0;
}
