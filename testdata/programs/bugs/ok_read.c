/* ok_read.c: correct program: read(2) into fresh malloc'd memory and use
   of exactly the bytes read (the kernel wrote them: not uninitialised;
   the shape of ur_partial_read.c, done right).

   main writes a 9-byte request into a pipe, reads it into a 64-byte
   malloc'd buffer, and parses only the n bytes read: every byte
   branched on lies below n.

   Output: "read 9 bytes", "method GET version 1", "digits 1". */
// expect: none
// memcheck: no
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
    int fds[2];
    char *buf;
    ssize_t n;
    int digits = 0;

    if (pipe(fds) != 0 || write(fds[1], "GET / v1\n", 9) != 9) {
        perror("pipe");
        return 1;
    }
    close(fds[1]);
    buf = malloc(64);
    n = read(fds[0], buf, 64);
    close(fds[0]);
    printf("read %zd bytes\n", n);
    if (n >= 9 && memcmp(buf, "GET", 3) == 0)
        printf("method GET version %c\n", buf[7]);
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] >= '0' && buf[i] <= '9')
            digits++;
    printf("digits %d\n", digits);
    free(buf);
    return 0;
}
