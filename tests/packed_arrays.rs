//! Values-only tapes keep an array of fixed-width primitives as one packed
//! slot (`Val::Packed`); annotated tapes keep a slot per element for the tree.

use kwire::budget::Budget;
use kwire::decode::tape::{Id, Packed, Val, Values};
use kwire::decode::values::{decode_annotated, decode_message};
use kwire::schema::{Catalogue, MessageKind, Primitive};

#[test]
fn a_values_only_array_of_fixed_width_elements_is_one_packed_slot() {
    // ElectLeaders v0: TopicPartitions [{Topic "t", Partitions [5, 6, 7]}], TimeoutMs 9.
    let body: &[u8] = &[
        0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 3, 0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0, 7, 0, 0, 0, 9,
    ];
    let cat = Catalogue::builtin();
    let spec = cat
        .message(MessageKind::Request, 43, 0, None)
        .expect("ElectLeaders v0");
    let mut v = Values::default();
    let (_, end, res) = decode_message(body, 0, &spec.plan(0), &mut v);
    assert!(res.is_ok() && end == body.len());
    let packed: Vec<(u32, Val)> = v
        .slots
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s.value, Val::Packed(_)))
        .map(|(i, s)| (i as u32, s.value))
        .collect();
    assert_eq!(
        packed,
        [(
            4,
            Val::Packed(Packed {
                at: 11,
                count: 3,
                ty: Primitive::Int32
            })
        )],
        "the partitions, their elements at 11"
    );
    let Val::Packed(p) = packed[0].1 else {
        unreachable!()
    };
    assert_eq!(
        p.values(body).collect::<Vec<_>>(),
        [Val::Int(5), Val::Int(6), Val::Int(7)]
    );
    assert_eq!(
        (v.slots[4].end, v.slots.len()),
        (5, 6),
        "no slot per element; TimeoutMs follows"
    );
    // The annotated tape keeps a slot per element, for the tree's element nodes.
    let mut a = Values::default();
    decode_annotated(body, 0, &spec.plan(0), &mut a, &Budget::default())
        .2
        .expect("decodes");
    assert_eq!(
        a.slots
            .iter()
            .filter(|s| s.id == Id::Element && matches!(s.value, Val::Int(_)))
            .count(),
        3
    );
}
