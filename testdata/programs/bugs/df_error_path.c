/* df_error_path.c: double free on an error path (the shape of CPython's
   import.c bug: a file closed on the error path and again by the caller).

   reader_load() fills r->buf; when the text has no newline it calls
   reader_close(), which frees r->buf (the root) but leaves the field
   dangling, and reports the error. main's cleanup() then frees r->buf
   again (the symptom), as it does after every load.

   Output: "load 'good' 0", "load 'bad' -1", then glibc aborts ("free():
   double free detected in tcache 2"). */
// expect: double_free
// memcheck: yes
// native: SIGABRT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct reader {
    char *buf;
    size_t len;
};

__attribute__((noinline)) static void reader_close(struct reader *r)
{
    free(r->buf); //@ root=double_free
    r->len = 0;
}

__attribute__((noinline)) static int reader_load(struct reader *r, const char *text)
{
    r->len = strlen(text);
    r->buf = malloc(r->len + 1);
    memcpy(r->buf, text, r->len + 1);
    if (strchr(r->buf, '\n') == NULL) {
        reader_close(r);
        return -1;
    }
    r->buf[r->len - 1] = '\0';
    return 0;
}

__attribute__((noinline)) static void cleanup(struct reader *r)
{
    free(r->buf); //@ bug=double_free
    r->buf = NULL;
}

int main(void)
{
    struct reader r;
    int rc;

    rc = reader_load(&r, "good\n");
    printf("load '%s' %d\n", r.buf, rc);
    cleanup(&r);
    rc = reader_load(&r, "bad");
    printf("load 'bad' %d\n", rc);
    fflush(stdout);
    cleanup(&r);
    return 0;
}
