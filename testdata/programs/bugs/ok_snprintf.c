/* ok_snprintf.c: correct program: strings formatted into buffers of the
   exact size snprintf(NULL, 0, ...) measured (the shape of
   ho_strcpy_nul.c, done right), then printed and freed.

   Output: "user-7:alpha (12)", "user-42:beta-gamma (18)",
   "user-1000:x (11)". */
// expect: none
// memcheck: no
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static char *format_user(int id, const char *name)
{
    int n = snprintf(NULL, 0, "user-%d:%s", id, name);
    char *s = malloc(n + 1);
    snprintf(s, n + 1, "user-%d:%s", id, name);
    return s;
}

int main(void)
{
    static const int ids[3] = {7, 42, 1000};
    static const char *names[3] = {"alpha", "beta-gamma", "x"};

    for (int i = 0; i < 3; i++) {
        char *s = format_user(ids[i], names[i]);
        int len = 0;
        while (s[len] != '\0')
            len++;
        printf("%s (%d)\n", s, len);
        free(s);
    }
    return 0;
}
