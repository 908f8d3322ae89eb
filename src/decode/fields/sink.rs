//! Where the walk over a struct's slots ([`super::walk`]) puts what it
//! builds: a tree's nodes, or nothing at all when only the warnings are
//! wanted (`kwire check`, [`crate::decode::DecodeOptions::findings_only`]).
//! The walk is generic over the two, so a check runs every check the tree's
//! builder runs, in its order, and never makes a node. The methods are
//! always inlined: left to the compiler, `kwire capture`'s text tree of the
//! Produce benchmark capture took 1.1% more instructions and `kwire check`
//! of it 1.5% more.

use crate::decode::tree::{push_with, reserve_nodes, Node};

/// A list the walk pushes nodes onto: a tree's `Vec<Node>`, or [`NoNodes`].
pub(crate) trait Nodes {
    /// What a push gives back: the node pushed, or nothing.
    type Node: Built<Children = Self>;
    /// The node `make` builds, at the end of the list; `make` is not called
    /// when nothing is built.
    fn push(&mut self, make: impl FnOnce() -> Node) -> &mut Self::Node;
    /// Room for `n` more nodes.
    fn reserve(&mut self, n: usize);
}

/// A node the walk pushed, or nothing.
pub(crate) trait Built {
    type Children: Nodes<Node = Self>;
    fn children(&mut self) -> &mut Self::Children;
    /// The node itself, when nodes are built: what only a tree needs (its
    /// value, type, note, extent) is set through it.
    fn node(&mut self) -> Option<&mut Node>;
}

impl Nodes for Vec<Node> {
    type Node = Node;
    #[inline(always)]
    fn push(&mut self, make: impl FnOnce() -> Node) -> &mut Node {
        push_with(self, make)
    }
    #[inline(always)]
    fn reserve(&mut self, n: usize) {
        reserve_nodes(self, n)
    }
}

impl Built for Node {
    type Children = Vec<Node>;
    #[inline(always)]
    fn children(&mut self) -> &mut Vec<Node> {
        &mut self.children
    }
    #[inline(always)]
    fn node(&mut self) -> Option<&mut Node> {
        Some(self)
    }
}

/// Nothing built: a node pushed is dropped unmade, with its children.
pub(crate) struct NoNodes;

impl Nodes for NoNodes {
    type Node = NoNodes;
    #[inline(always)]
    fn push(&mut self, _make: impl FnOnce() -> Node) -> &mut NoNodes {
        self
    }
    #[inline(always)]
    fn reserve(&mut self, _n: usize) {}
}

impl Built for NoNodes {
    type Children = NoNodes;
    #[inline(always)]
    fn children(&mut self) -> &mut NoNodes {
        self
    }
    #[inline(always)]
    fn node(&mut self) -> Option<&mut Node> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::tree::{Region, Role};

    #[test]
    fn a_tree_keeps_what_is_pushed_and_no_nodes_makes_nothing() {
        let mut tree: Vec<Node> = Vec::new();
        let n = Nodes::push(&mut tree, || {
            Node::new("a", "int8", 3, Region::RequestBody, Role::Structure)
        });
        Nodes::push(n.children(), || {
            Node::new("b", "int8", 4, Region::RequestBody, Role::Structure)
        });
        assert_eq!(n.node().map(|n| n.offset), Some(3));
        assert_eq!(tree.len(), 1);
        assert!(tree[0].children[0].name.is("b"));

        let mut none = NoNodes;
        let n = none.push(|| unreachable!("nothing is built"));
        assert!(n.node().is_none());
        assert!(n.children().push(|| unreachable!()).node().is_none());
    }
}
