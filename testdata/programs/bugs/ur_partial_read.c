/* ur_partial_read.c: read(2) fills only part of a fresh heap buffer; the
   bytes read are used (correctly: the kernel wrote them, no finding) and
   then a byte past them decides a branch (the bug).

   main writes the 4-byte message "GET\n" into a pipe, mallocs a 16-byte
   buffer (the root) and reads from the pipe into it: 4 bytes arrive. It
   checks the first three bytes ("GET": initialised by the kernel, not a
   finding) and then tests buf[8] for a version byte (the symptom:
   nothing wrote buf[8]; the load and the branch are on one line).
   Natively the byte is zero.

   Output: "read 4 bytes", "method GET", "version none". */
// expect: uninitialized_read
// memcheck: yes
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
    int fds[2];
    char *buf;
    ssize_t n;
    const char *version = "none";

    if (pipe(fds) != 0 || write(fds[1], "GET\n", 4) != 4) {
        perror("pipe");
        return 1;
    }
    close(fds[1]);
    buf = malloc(16); //@ root=uninitialized_read
    n = read(fds[0], buf, 16);
    close(fds[0]);
    printf("read %zd bytes\n", n);
    if (buf[0] == 'G' && buf[1] == 'E' && buf[2] == 'T')
        printf("method GET\n");
    if (buf[8] == '1') { //@ bug=uninitialized_read
        version = "1";
        printf("versioned request\n");
    }
    printf("version %s\n", version);
    free(buf);
    return 0;
}
