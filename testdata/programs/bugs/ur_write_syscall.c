/* ur_write_syscall.c: uninitialised heap bytes passed to write(2).

   rec_new() mallocs a 32-byte record (the root) and sets id, kind, the
   first 4 bytes of tag and stamp, but neither tag[4..8) nor spare.
   rec_save(), called later, writes the whole record to /dev/null (the
   symptom: the write call's buffer holds 12 uninitialised bytes; the
   kernel reads them, no instruction of the program does).

   Output: "saved 2 records, 64 bytes". */
// expect: uninitialized_read
// memcheck: yes
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct record {
    int id;
    int kind;
    char tag[8];
    long stamp;
    long spare;
};

__attribute__((noinline)) static struct record *rec_new(int id)
{
    struct record *r = malloc(sizeof *r); //@ root=uninitialized_read
    r->id = id;
    r->kind = 1;
    memcpy(r->tag, "rec", 4);
    r->stamp = 1000 + id;
    return r;
}

__attribute__((noinline)) static long rec_save(int fd, const struct record *r)
{
    return write(fd, r, sizeof *r); //@ bug=uninitialized_read
}

int main(void)
{
    int fd = open("/dev/null", O_WRONLY);
    struct record *a = rec_new(1);
    long total = 0;

    if (fd < 0) {
        perror("/dev/null");
        return 1;
    }
    total += rec_save(fd, a);
    a->id = 2;
    total += rec_save(fd, a);
    printf("saved 2 records, %ld bytes\n", total);
    close(fd);
    free(a);
    return 0;
}
