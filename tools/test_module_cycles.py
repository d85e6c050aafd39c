#!/usr/bin/env python3
"""Tests of tools/module_cycles.py on small made-up crates: python3 tools/test_module_cycles.py"""

import os
import subprocess
import sys
import tempfile
import unittest

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "module_cycles.py")


def run(files, *args):
    with tempfile.TemporaryDirectory() as d:
        for path, text in files.items():
            full = os.path.join(d, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(text)
        p = subprocess.run([sys.executable, TOOL, d, *args], capture_output=True, text=True)
        return p.returncode, p.stdout


class ModuleCycles(unittest.TestCase):
    def test_a_use_loop_is_a_cycle(self):
        rc, out = run({"lib.rs": "mod a; mod b;", "a.rs": "use crate::b::X;", "b.rs": "pub fn f() { crate::a::g() }"})
        self.assertEqual(rc, 1)
        self.assertIn("a -> b -> a", out)

    def test_one_way_is_not(self):
        rc, _ = run({"lib.rs": "mod a; mod b;", "a.rs": "use crate::b::X;", "b.rs": "pub struct X;"})
        self.assertEqual(rc, 0)

    def test_grouped_paths_super_and_folders(self):
        files = {
            "lib.rs": "mod t; mod s;",
            "t/mod.rs": "mod x; mod y;",
            "t/x.rs": "use super::y::Z;",
            "t/y.rs": "use crate::{s::{self, S}};",
            "s.rs": "pub fn f() { let _ = crate::t::x::g; }",
        }
        rc, out = run(files)
        self.assertEqual(rc, 1)
        self.assertIn("s, t::x, t::y", out)

    def test_comments_strings_tests_and_parent_edges_do_not_count(self):
        files = {
            "lib.rs": "mod a; mod b; mod t;",
            "a.rs": '// crate::b\nconst S: &str = "crate::b::X";\nuse crate::t::C;\n',
            "b.rs": "use crate::a::Y;\n#[cfg(test)]\nmod tests {\n    use crate::b::*;\n    fn f() { crate::t::c::h(); }\n}\n",
            "t/mod.rs": "mod c; pub use c::C;",
            "t/c.rs": "use super::C as D;",
        }
        rc, out = run(files)
        self.assertEqual(rc, 0, out)

    def test_among_fails_only_on_cycles_holding_two_named(self):
        files = {"lib.rs": "", "a.rs": "use crate::b::X;", "b.rs": "use crate::a::Y;", "c.rs": "use crate::a::Y;"}
        self.assertEqual(run(files, "--among", "a,c")[0], 0)
        self.assertEqual(run(files, "--among", "a,b")[0], 1)


if __name__ == "__main__":
    unittest.main()
