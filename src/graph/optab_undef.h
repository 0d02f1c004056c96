/* optab_undef.h — ends a reader's definitions of the derivative column's words (G, A,
 * B, C, OUT, K, NONE and the op names it builds with), which each reader of
 * optab.def defines its own way (optab.c: what a derivative reads; grad_rules.c: graph
 * builders). No include guard: included once after each such reader. */
#undef G
#undef A
#undef B
#undef C
#undef OUT
#undef K
#undef NONE
#undef NEG
#undef EXP
#undef LOG
#undef SIN
#undef COS
#undef TANH
#undef ERF
#undef ADD
#undef SUB
#undef MUL
#undef DIV
#undef POW
#undef CMPGT
#undef CMPLT
#undef WHERE
