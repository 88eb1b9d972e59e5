/* df_shallow_copy.c: double free through two copies of a pointer kept in
   two structures: the shallow-copy pattern of Tidy bug 34132 (DupAttrs).

   An element's attribute list is duplicated for the inline stack by
   dup_attrs(), which clones each attribute's name but copies the value
   pointer (`n->value = a->value;`, the shallow copy). pop_inline() frees
   the duplicate's attributes, names and values (the first free of a
   value, the root), and discard_element() later frees the original
   element's (the second free of the same value, the symptom). Both chains
   meet at the original attribute's value field.

   Output: "font color=red size=2", "popped", then glibc aborts on the
   second free ("free(): double free detected in tcache 2"). */
// expect: double_free
// memcheck: yes
// native: SIGABRT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct attr {
    char *name;
    char *value;
    struct attr *next;
};

struct node {
    const char *tag;
    struct attr *attrs;
};

__attribute__((noinline)) static struct attr *new_attr(const char *name, const char *value, struct attr *next)
{
    struct attr *a = malloc(sizeof *a);
    a->name = strdup(name);
    a->value = strdup(value);
    a->next = next;
    return a;
}

__attribute__((noinline)) static struct attr *dup_attrs(const struct attr *a)
{
    struct attr *head = NULL, **tail = &head;
    for (; a != NULL; a = a->next) {
        struct attr *n = malloc(sizeof *n);
        n->name = strdup(a->name);
        n->value = a->value; /* shallow: should be strdup(a->value) */
        n->next = NULL;
        *tail = n;
        tail = &n->next;
    }
    return head;
}

__attribute__((noinline)) static void pop_inline(struct node *n)
{
    struct attr *a = n->attrs;
    while (a != NULL) {
        struct attr *next = a->next;
        free(a->name);
        free(a->value); //@ root=double_free
        free(a);
        a = next;
    }
    n->attrs = NULL;
}

__attribute__((noinline)) static void discard_element(struct node *n)
{
    struct attr *a = n->attrs;
    while (a != NULL) {
        struct attr *next = a->next;
        free(a->value); //@ bug=double_free
        free(a->name);
        free(a);
        a = next;
    }
    n->attrs = NULL;
}

int main(void)
{
    struct node font = {"font", NULL};
    struct node istack;

    font.attrs = new_attr("color", "red", new_attr("size", "2", NULL));
    istack.tag = font.tag;
    istack.attrs = dup_attrs(font.attrs);
    printf("%s", istack.tag);
    for (struct attr *a = istack.attrs; a != NULL; a = a->next)
        printf(" %s=%s", a->name, a->value);
    printf("\n");
    pop_inline(&istack);
    printf("popped\n");
    fflush(stdout);
    discard_element(&font);
    return 0;
}
