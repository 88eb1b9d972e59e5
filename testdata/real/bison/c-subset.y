/* c-subset.y: a small grammar of C expressions, statements and
   declarations, the input of Bison in the real-programs benchmark
   (testdata/real/README.md). Tokens with string aliases, precedence
   declarations and a few dozen rules: enough to fill Bison's symbol
   table with tokens, aliases and nonterminals. It is only read by Bison:
   no parser is built from it. */
%define parse.error verbose
%expect 2
%token IDENTIFIER "identifier" CONSTANT "constant" STRING_LITERAL "string"
%token INC_OP "++" DEC_OP "--" LE_OP "<=" GE_OP ">=" EQ_OP "==" NE_OP "!="
%token AND_OP "&&" OR_OP "||" PTR_OP "->"
%token INT "int" CHAR "char" VOID "void" STRUCT "struct"
%token IF "if" ELSE "else" WHILE "while" FOR "for" RETURN "return"
%right '='
%left OR_OP
%left AND_OP
%left EQ_OP NE_OP
%left '<' '>' LE_OP GE_OP
%left '+' '-'
%left '*' '/' '%'
%right UNARY
%nonassoc LOWER_THAN_ELSE
%nonassoc ELSE
%start translation_unit
%%
primary_expression
  : IDENTIFIER
  | CONSTANT
  | STRING_LITERAL
  | '(' expression ')'
  ;
postfix_expression
  : primary_expression
  | postfix_expression '[' expression ']'
  | postfix_expression '(' ')'
  | postfix_expression '(' argument_list ')'
  | postfix_expression '.' IDENTIFIER
  | postfix_expression PTR_OP IDENTIFIER
  | postfix_expression INC_OP
  | postfix_expression DEC_OP
  ;
argument_list
  : assignment_expression
  | argument_list ',' assignment_expression
  ;
unary_expression
  : postfix_expression
  | INC_OP unary_expression
  | DEC_OP unary_expression
  | '-' unary_expression %prec UNARY
  | '!' unary_expression %prec UNARY
  | '*' unary_expression %prec UNARY
  | '&' unary_expression %prec UNARY
  ;
binary_expression
  : unary_expression
  | binary_expression '*' binary_expression
  | binary_expression '/' binary_expression
  | binary_expression '%' binary_expression
  | binary_expression '+' binary_expression
  | binary_expression '-' binary_expression
  | binary_expression '<' binary_expression
  | binary_expression '>' binary_expression
  | binary_expression LE_OP binary_expression
  | binary_expression GE_OP binary_expression
  | binary_expression EQ_OP binary_expression
  | binary_expression NE_OP binary_expression
  | binary_expression AND_OP binary_expression
  | binary_expression OR_OP binary_expression
  ;
assignment_expression
  : binary_expression
  | unary_expression '=' assignment_expression
  ;
expression
  : assignment_expression
  | expression ',' assignment_expression
  ;
type_specifier
  : VOID
  | CHAR
  | INT
  | STRUCT IDENTIFIER '{' struct_declaration_list '}'
  | STRUCT IDENTIFIER
  ;
struct_declaration_list
  : declaration
  | struct_declaration_list declaration
  ;
declarator
  : IDENTIFIER
  | '*' declarator
  | declarator '[' CONSTANT ']'
  | declarator '(' parameter_list ')'
  | declarator '(' ')'
  ;
parameter_list
  : type_specifier declarator
  | parameter_list ',' type_specifier declarator
  ;
init_declarator
  : declarator
  | declarator '=' assignment_expression
  ;
declaration
  : type_specifier init_declarator ';'
  ;
statement
  : compound_statement
  | expression ';'
  | ';'
  | IF '(' expression ')' statement %prec LOWER_THAN_ELSE
  | IF '(' expression ')' statement ELSE statement
  | WHILE '(' expression ')' statement
  | FOR '(' expression ';' expression ';' expression ')' statement
  | RETURN expression ';'
  | RETURN ';'
  ;
block_item_list
  : block_item
  | block_item_list block_item
  ;
block_item
  : declaration
  | statement
  ;
compound_statement
  : '{' '}'
  | '{' block_item_list '}'
  ;
external_declaration
  : type_specifier declarator compound_statement
  | declaration
  ;
translation_unit
  : external_declaration
  | translation_unit external_declaration
  ;
%%
