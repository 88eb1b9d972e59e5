/* uf_global.c: unmatched free of a global's address, far from where it was
   stored.

   config_init() gives a configuration either a strdup'd name or, when no
   name is given, the address of the global array `default_name`, stored
   into the struct field c->name (the root). Much later config_free()
   frees c->name unconditionally (the symptom): for the second
   configuration that is the global's address, never allocated. The
   pointer travels: lea of the global -> c->name (heap) -> load -> free's
   argument.

   Output: "alpha 1", "default 2", then glibc aborts at the second
   config_free ("free(): invalid pointer" or similar). */
// expect: unmatched_free
// memcheck: yes
// native: SIGABRT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct config {
    char *name;
    int level;
};

static char default_name[] = "default";

/* A call right after the root's store keeps gcc from merging it with the
   other branch's store of c->name (it would then sit on the if's lines). */
__attribute__((noinline)) static void note_default(const struct config *c)
{
    fprintf(stderr, "using %s\n", c->name);
}

__attribute__((noinline)) static struct config *config_init(const char *name, int level)
{
    struct config *c = malloc(sizeof *c);
    if (name != NULL) {
        c->name = strdup(name);
    } else {
        c->name = default_name; //@ root=unmatched_free
        note_default(c);
    }
    c->level = level;
    return c;
}

__attribute__((noinline)) static void config_print(const struct config *c)
{
    printf("%s %d\n", c->name, c->level);
}

__attribute__((noinline)) static void config_free(struct config *c)
{
    free(c->name); //@ bug=unmatched_free
    free(c);
}

int main(void)
{
    struct config *a = config_init("alpha", 1);
    struct config *b = config_init(NULL, 2);
    config_print(a);
    config_print(b);
    fflush(stdout);
    config_free(a);
    config_free(b);
    return 0;
}
