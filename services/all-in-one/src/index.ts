/** @aps/all-in-one — every APS service in one process on embedded defaults (DESIGN.md §3). */
export { startAllInOne, type AllInOne, type AllInOneOptions } from "./all-in-one.js";
