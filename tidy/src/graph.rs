//! The circles of a directed graph: its strongly connected components of more than one node
//! (Tarjan's algorithm, iterative so a deep graph cannot overflow the stack).

use std::collections::BTreeMap;

/// Each set of nodes that reach one another, for sets of two or more, each sorted, in node order.
pub(crate) fn circles<N: Ord + Clone>(edges: &[(N, N)]) -> Vec<Vec<N>> {
    let mut nodes: Vec<N> = edges
        .iter()
        .flat_map(|(a, b)| [a.clone(), b.clone()])
        .collect();
    nodes.sort();
    nodes.dedup();
    let index: BTreeMap<&N, usize> = nodes.iter().enumerate().map(|(i, n)| (n, i)).collect();
    let mut next = vec![Vec::new(); nodes.len()];
    for (a, b) in edges {
        next[index[a]].push(index[b]);
    }
    let mut found: Vec<Vec<N>> = Tarjan::new(&next)
        .run()
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let mut c: Vec<N> = c.into_iter().map(|i| nodes[i].clone()).collect();
            c.sort();
            c
        })
        .collect();
    found.sort();
    found
}

struct Tarjan<'a> {
    next: &'a [Vec<usize>],
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    counter: usize,
    components: Vec<Vec<usize>>,
}

impl<'a> Tarjan<'a> {
    fn new(next: &'a [Vec<usize>]) -> Self {
        let n = next.len();
        Tarjan {
            next,
            index: vec![None; n],
            low: vec![0; n],
            on_stack: vec![false; n],
            stack: Vec::new(),
            counter: 0,
            components: Vec::new(),
        }
    }

    fn run(mut self) -> Vec<Vec<usize>> {
        for node in 0..self.next.len() {
            if self.index[node].is_none() {
                self.visit(node);
            }
        }
        self.components
    }

    /// A depth-first walk from `root` with an explicit stack of (node, next edge to follow).
    fn visit(&mut self, root: usize) {
        let mut work = vec![(root, 0)];
        self.open(root);
        while let Some(&mut (node, ref mut edge)) = work.last_mut() {
            if let Some(&to) = self.next[node].get(*edge) {
                *edge += 1;
                match self.index[to] {
                    None => {
                        self.open(to);
                        work.push((to, 0));
                    }
                    Some(i) if self.on_stack[to] => self.low[node] = self.low[node].min(i),
                    Some(_) => {}
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                self.low[parent] = self.low[parent].min(self.low[node]);
            }
            if Some(self.low[node]) == self.index[node] {
                self.close(node);
            }
        }
    }

    fn open(&mut self, node: usize) {
        self.index[node] = Some(self.counter);
        self.low[node] = self.counter;
        self.counter += 1;
        self.stack.push(node);
        self.on_stack[node] = true;
    }

    fn close(&mut self, node: usize) {
        let mut component = Vec::new();
        while let Some(top) = self.stack.pop() {
            self.on_stack[top] = false;
            component.push(top);
            if top == node {
                break;
            }
        }
        self.components.push(component);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_circle_is_found_once_and_a_line_is_none() {
        let edges = [
            ("a", "b"),
            ("b", "c"),
            ("c", "a"),
            ("c", "d"),
            ("d", "e"),
            ("e", "d"),
            ("e", "f"),
        ];
        assert_eq!(circles(&edges), [vec!["a", "b", "c"], vec!["d", "e"]]);
        assert!(circles(&[("a", "b"), ("b", "c")]).is_empty());
    }
}
