/** The node arguments that make a process load `.ts` files (see typescript-loader.mjs). */
export declare const TYPESCRIPT_LOADER: string[]
