export function sourceFiles(dir: string): string[];
export function importSpecifiers(file: string): string[];
export function relativeImports(file: string): Array<{ specifier: string; target: string }>;
export function importGraph(src: string): Map<string, string[]>;
export function findCycle(graph: Map<string, string[]>): string[] | undefined;
