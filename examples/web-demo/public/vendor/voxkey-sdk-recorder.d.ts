// Types for type-checking the page: the backend serves `@voxkey/sdk/recorder` (the SDK's
// self-contained dist/recorder.js) at /vendor/voxkey-sdk-recorder.js.
export * from '@voxkey/sdk/recorder';
