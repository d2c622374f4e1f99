// `node --import ./node20-shim/register.mjs ...`: installs the resolve hook below.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
