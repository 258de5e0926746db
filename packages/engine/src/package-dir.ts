import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The engine package's folder (packages/engine). This module runs one level below it either way:
 * from src/ under tests, from a bundle in dist/ once built, so files beside the package (vad/, dist/,
 * the repository's models/) are found from here, not from the stage folder a caller sits in.
 */
export const PACKAGE_DIR = dirname(dirname(fileURLToPath(import.meta.url)));
