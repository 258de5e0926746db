export declare const REPO_ROOT: string;
export declare const SKIPS_DIR: string;
/** Whether the tests can run; records (or, with VOXKEY_REQUIRE_ALL_TESTS=1, throws) when `present` is false. */
export declare function prerequisite(prerequisite: { testFile: string; tests: string; missing: string; present: boolean }): boolean;
