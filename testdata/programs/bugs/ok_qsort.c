/* ok_qsort.c: correct program: qsort of a malloc'd array of structs
   through a comparator, and bsearch in it.

   Output: "sorted 3 7 9 12 15 21 40 56", "found 21 at 5", "missing 8". */
// expect: none
// memcheck: no
#include <stdio.h>
#include <stdlib.h>

struct item {
    int key;
    int weight;
};

static int cmp_item(const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    return (x->key > y->key) - (x->key < y->key);
}

int main(void)
{
    static const int keys[8] = {15, 3, 56, 9, 40, 21, 7, 12};
    struct item *items = malloc(8 * sizeof *items);
    struct item probe, *hit;

    for (int i = 0; i < 8; i++) {
        items[i].key = keys[i];
        items[i].weight = i;
    }
    qsort(items, 8, sizeof *items, cmp_item);
    printf("sorted");
    for (int i = 0; i < 8; i++)
        printf(" %d", items[i].key);
    printf("\n");
    probe.key = 21;
    probe.weight = 0;
    hit = bsearch(&probe, items, 8, sizeof *items, cmp_item);
    if (hit != NULL)
        printf("found %d at %d\n", hit->key, (int)(hit - items));
    probe.key = 8;
    hit = bsearch(&probe, items, 8, sizeof *items, cmp_item);
    if (hit == NULL)
        printf("missing %d\n", probe.key);
    free(items);
    return 0;
}
