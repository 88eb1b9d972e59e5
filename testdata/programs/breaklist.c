/* breaklist.c: the MG++ paper's running example (the MG++ paper, Figures 1 and
   2): a two-node list is built and then broken by a NULL store.

   Exercises: the six graph changes of the example, one statement each,
   between two markers so that a test can find them: node created (line
   marked S11), its next set to NULL (S12), a second node created (S13),
   its next set to NULL (S14), the first node linked to the second (S15),
   and the faulty statement (S19) that breaks the list by storing NULL
   into the first node's next. Only the next fields are written (data is
   never touched), so the allocator-agnostic graph creates each node at
   the first store into it.

   Usage: breaklist   (no arguments)

   Output (stdout); addresses change from run to run:
       node 0x... new_node 0x...
       node->next (nil)
   Exit status 0.

   A test should assert those lines. In a trace: MGTRACE_MARK("begin"),
   two malloc calls (S11, S13), four 8-byte stores to node+8 / new_node+8
   (S12, S14, S15, S19) with the values NULL, NULL, new_node, NULL, then
   MGTRACE_MARK("end"). The aware graph between the markers makes exactly
   the paper's six changes: node (1):S11, edge (2):S12, node (3):S13,
   edge (4):S14, edge (5):S15, edge (6):S19. */
#include <stdio.h>
#include <stdlib.h>

#include "mgtrace.h"

struct snode {
    long data;
    struct snode *next;
};

int
main(void)
{
    struct snode *volatile node, *volatile new_node;

    MGTRACE_MARK("begin");
    node = malloc(sizeof(struct snode)); /* S11 */
    if (node == NULL)
        return 1;
    node->next = NULL; /* S12 */
    new_node = malloc(sizeof(struct snode)); /* S13 */
    if (new_node == NULL)
        return 1;
    new_node->next = NULL; /* S14 */
    node->next = new_node; /* S15 */
    node->next = NULL; /* S19 */
    MGTRACE_MARK("end");

    printf("node %p new_node %p\n", (void *)node, (void *)new_node);
    printf("node->next %p\n", (void *)node->next);
    return 0;
}
