/**
 * Types of the parts of `mvdan-sh` (the GopherJS build of mvdan/sh's
 * `syntax` package, published by its author) that the gate uses. Nodes are Go
 * structs seen from JavaScript: fields by their Go names, slices as arrays,
 * operators as numeric tokens (shell-syntax.ts names the ones it reads).
 */
declare module 'mvdan-sh' {
  /** Any syntax node; {@link ShSyntax.NodeType} names its Go type. */
  export interface ShNode {
    readonly [field: string]: any;
  }
  export interface ShParser {
    /** Parses a whole script; throws a parse error (with `Text`) on invalid input. */
    Parse(source: string, name: string): ShNode;
  }
  export interface ShSyntax {
    NewParser(...options: unknown[]): ShParser;
    NodeType(node: ShNode): string;
    Variant(variant: number): unknown;
    /** Visits `node` and its children depth first; a false return skips the children. */
    Walk(node: ShNode, visit: (node: ShNode | null) => boolean): void;
    readonly LangBash: number;
  }
  const sh: { readonly syntax: ShSyntax };
  export default sh;
}
