/* ok_null_check.c: correct program: a lookup that returns NULL for a
   missing key, passed up two calls and checked before use (the shape of
   np_lookup.c and np_copy_chain.c, done right).

   Output: "scan etc: 12 bytes", "scan tmp: missing", "output -". */
// expect: none
// memcheck: no
// args: tmp
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dirent_s {
    const char *dir;
    const char *entries;
};

static const struct dirent_s table[] = {
    {"etc", "passwd group"},
    {"usr", "bin lib share"},
};

struct opts {
    const char *output;
    long verbose;
};

__attribute__((noinline)) static char *savedir(const char *dir)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].dir, dir) == 0)
            return strdup(table[i].entries);
    return NULL;
}

__attribute__((noinline)) static char *get_directory_contents(const char *dir)
{
    char *dirp = savedir(dir);
    return dirp;
}

__attribute__((noinline)) static void scan_directory(const char *dir)
{
    char *entry = get_directory_contents(dir);
    if (entry == NULL) {
        printf("scan %s: missing\n", dir);
        return;
    }
    printf("scan %s: %zu bytes\n", dir, strlen(entry));
    free(entry);
}

__attribute__((noinline)) static const char *output_name(const struct opts *o)
{
    return o->output != NULL ? o->output : "-";
}

int main(int argc, char **argv)
{
    struct opts o = {NULL, 0};

    scan_directory("etc");
    if (argc > 1)
        scan_directory(argv[1]);
    printf("output %s\n", output_name(&o));
    return 0;
}
