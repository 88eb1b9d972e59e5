/* np_lookup.c: NULL returned by a lookup function and dereferenced by the
   caller's caller (the shape of tar 1.13.25's incremen.c bug: savedir()
   returns NULL when opendir fails and the caller's strlen() crashes).

   savedir() looks a directory up in a fixed table and returns a copy of
   its entry list, or NULL when the directory is missing (`return NULL;`,
   the root). get_directory_contents() returns savedir()'s result as is;
   scan_directory() copies it into `entry` and calls strlen(entry) (the
   symptom: the fault is inside libc's strlen, called from this line).
   The argument names a directory that is not in the table.

   Output: "scan etc: 12 bytes", then SIGSEGV in strlen. */
// expect: null_pointer_deref
// memcheck: yes
// args: tmp
// native: SIGSEGV
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

__attribute__((noinline)) static char *savedir(const char *dir)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].dir, dir) == 0)
            return strdup(table[i].entries);
    return NULL; //@ root=null_pointer_deref
}

__attribute__((noinline)) static char *get_directory_contents(const char *dir)
{
    char *dirp = savedir(dir);
    return dirp;
}

__attribute__((noinline)) static size_t scan_directory(const char *dir)
{
    char *entry = get_directory_contents(dir);
    size_t len = strlen(entry); //@ bug=null_pointer_deref
    printf("scan %s: %zu bytes\n", dir, len);
    fflush(stdout);
    free(entry);
    return len;
}

int main(int argc, char **argv)
{
    scan_directory("etc");
    if (argc > 1)
        scan_directory(argv[1]);
    return 0;
}
