/** `@voxkey/sdk` for browsers: everything from the main entry plus the microphone recorder. */
export * from './index.js';
export * from './recorder.js';
