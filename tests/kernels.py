"""Every top-level compiled entry point of the core, by module and attribute (the inlined
helpers compile inside these): what the warm-up must compile and a held process not call."""

KERNELS = {
    "rookhaven.core.providers.kernel": ["_kernel", "_union"],
    "rookhaven.core.providers.feedback": ["_tally_kernel", "_fill_kernel", "_bo1_kernel"],
    "rookhaven.core.providers.lookup": ["_compiled"],
    "rookhaven.core.select": ["_CUT_AND_RANK"],
    "rookhaven.core.hitlists": ["_LISTS", "_RANKED_LISTS", "_ONE_PART", "_STRING_OFFSETS"],
    "rookhaven.core.rng": ["_COMPILED", "_LABELLED"],
    "rookhaven.core.asciitokens": ["_CLASSES", "_COUNT"],
}
