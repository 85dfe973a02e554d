import { runCli } from './main.js';

runCli();
