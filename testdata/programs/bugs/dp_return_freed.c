/* dp_return_freed.c: dangling read through a pointer returned, up two
   calls, by a function that had already freed its block.

   pop_name() unlinks the top item of a stack, frees it (the root) and
   returns it->name, the address of the item's name field (offset 16)
   inside the freed block. take() passes it on as its own return value,
   main hands it to report(), which reads name[0] (the symptom). The
   pointer is copied through two return values and an argument after the
   one addition that made it.

   Output: "top bananas qty 5", "first letter yes" (natively the name, at
   offset 16, survives the free), "left apples". */
// expect: dangling_pointer_deref
// memcheck: yes
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct item {
    int qty;
    struct item *below;
    char name[16];
};

__attribute__((noinline)) static struct item *push(struct item *top, const char *name, int qty)
{
    struct item *it = malloc(sizeof *it);
    snprintf(it->name, sizeof it->name, "%s", name);
    it->qty = qty;
    it->below = top;
    return it;
}

__attribute__((noinline)) static char *pop_name(struct item **top)
{
    struct item *it = *top;
    *top = it->below;
    free(it); //@ root=dangling_pointer_deref
    return it->name;
}

__attribute__((noinline)) static char *take(struct item **top)
{
    char *name = pop_name(top);
    return name;
}

__attribute__((noinline)) static int is_letter(char c)
{
    return c >= 'a' && c <= 'z';
}

__attribute__((noinline)) static void report(const char *name)
{
    int letter = is_letter(name[0]); //@ bug=dangling_pointer_deref
    printf("first letter %s\n", letter ? "yes" : "no");
}

int main(void)
{
    struct item *top = NULL;
    char *name;

    top = push(top, "apples", 3);
    top = push(top, "bananas", 5);
    printf("top %s qty %d\n", top->name, top->qty);
    name = take(&top);
    report(name);
    printf("left %s\n", top->name);
    free(top);
    return 0;
}
