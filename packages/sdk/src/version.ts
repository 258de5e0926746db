declare const __VOXKEY_SDK_VERSION__: string | undefined;

/** This SDK's version (`package.json`), sent as `User-Agent: voxkey-sdk/<version>` outside browsers. */
export const SDK_VERSION: string =
  typeof __VOXKEY_SDK_VERSION__ === 'string' ? __VOXKEY_SDK_VERSION__ : '0.0.0-development';
