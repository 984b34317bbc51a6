//! Baseline for the benchmark (generated; see examples/bench.rs): 1,000 trivial
//! hand-written `#[test]`s, to measure what libtest itself costs per test
//! (it spawns a thread per test), so the attribute path's own overhead can
//! be told apart from libtest's.

fn check(i: usize) {
    assert!(std::hint::black_box(i) < 1_000_000);
}

#[test]
fn t0000() {
    check(0);
}

#[test]
fn t0001() {
    check(1);
}

#[test]
fn t0002() {
    check(2);
}

#[test]
fn t0003() {
    check(3);
}

#[test]
fn t0004() {
    check(4);
}

#[test]
fn t0005() {
    check(5);
}

#[test]
fn t0006() {
    check(6);
}

#[test]
fn t0007() {
    check(7);
}

#[test]
fn t0008() {
    check(8);
}

#[test]
fn t0009() {
    check(9);
}

#[test]
fn t0010() {
    check(10);
}

#[test]
fn t0011() {
    check(11);
}

#[test]
fn t0012() {
    check(12);
}

#[test]
fn t0013() {
    check(13);
}

#[test]
fn t0014() {
    check(14);
}

#[test]
fn t0015() {
    check(15);
}

#[test]
fn t0016() {
    check(16);
}

#[test]
fn t0017() {
    check(17);
}

#[test]
fn t0018() {
    check(18);
}

#[test]
fn t0019() {
    check(19);
}

#[test]
fn t0020() {
    check(20);
}

#[test]
fn t0021() {
    check(21);
}

#[test]
fn t0022() {
    check(22);
}

#[test]
fn t0023() {
    check(23);
}

#[test]
fn t0024() {
    check(24);
}

#[test]
fn t0025() {
    check(25);
}

#[test]
fn t0026() {
    check(26);
}

#[test]
fn t0027() {
    check(27);
}

#[test]
fn t0028() {
    check(28);
}

#[test]
fn t0029() {
    check(29);
}

#[test]
fn t0030() {
    check(30);
}

#[test]
fn t0031() {
    check(31);
}

#[test]
fn t0032() {
    check(32);
}

#[test]
fn t0033() {
    check(33);
}

#[test]
fn t0034() {
    check(34);
}

#[test]
fn t0035() {
    check(35);
}

#[test]
fn t0036() {
    check(36);
}

#[test]
fn t0037() {
    check(37);
}

#[test]
fn t0038() {
    check(38);
}

#[test]
fn t0039() {
    check(39);
}

#[test]
fn t0040() {
    check(40);
}

#[test]
fn t0041() {
    check(41);
}

#[test]
fn t0042() {
    check(42);
}

#[test]
fn t0043() {
    check(43);
}

#[test]
fn t0044() {
    check(44);
}

#[test]
fn t0045() {
    check(45);
}

#[test]
fn t0046() {
    check(46);
}

#[test]
fn t0047() {
    check(47);
}

#[test]
fn t0048() {
    check(48);
}

#[test]
fn t0049() {
    check(49);
}

#[test]
fn t0050() {
    check(50);
}

#[test]
fn t0051() {
    check(51);
}

#[test]
fn t0052() {
    check(52);
}

#[test]
fn t0053() {
    check(53);
}

#[test]
fn t0054() {
    check(54);
}

#[test]
fn t0055() {
    check(55);
}

#[test]
fn t0056() {
    check(56);
}

#[test]
fn t0057() {
    check(57);
}

#[test]
fn t0058() {
    check(58);
}

#[test]
fn t0059() {
    check(59);
}

#[test]
fn t0060() {
    check(60);
}

#[test]
fn t0061() {
    check(61);
}

#[test]
fn t0062() {
    check(62);
}

#[test]
fn t0063() {
    check(63);
}

#[test]
fn t0064() {
    check(64);
}

#[test]
fn t0065() {
    check(65);
}

#[test]
fn t0066() {
    check(66);
}

#[test]
fn t0067() {
    check(67);
}

#[test]
fn t0068() {
    check(68);
}

#[test]
fn t0069() {
    check(69);
}

#[test]
fn t0070() {
    check(70);
}

#[test]
fn t0071() {
    check(71);
}

#[test]
fn t0072() {
    check(72);
}

#[test]
fn t0073() {
    check(73);
}

#[test]
fn t0074() {
    check(74);
}

#[test]
fn t0075() {
    check(75);
}

#[test]
fn t0076() {
    check(76);
}

#[test]
fn t0077() {
    check(77);
}

#[test]
fn t0078() {
    check(78);
}

#[test]
fn t0079() {
    check(79);
}

#[test]
fn t0080() {
    check(80);
}

#[test]
fn t0081() {
    check(81);
}

#[test]
fn t0082() {
    check(82);
}

#[test]
fn t0083() {
    check(83);
}

#[test]
fn t0084() {
    check(84);
}

#[test]
fn t0085() {
    check(85);
}

#[test]
fn t0086() {
    check(86);
}

#[test]
fn t0087() {
    check(87);
}

#[test]
fn t0088() {
    check(88);
}

#[test]
fn t0089() {
    check(89);
}

#[test]
fn t0090() {
    check(90);
}

#[test]
fn t0091() {
    check(91);
}

#[test]
fn t0092() {
    check(92);
}

#[test]
fn t0093() {
    check(93);
}

#[test]
fn t0094() {
    check(94);
}

#[test]
fn t0095() {
    check(95);
}

#[test]
fn t0096() {
    check(96);
}

#[test]
fn t0097() {
    check(97);
}

#[test]
fn t0098() {
    check(98);
}

#[test]
fn t0099() {
    check(99);
}

#[test]
fn t0100() {
    check(100);
}

#[test]
fn t0101() {
    check(101);
}

#[test]
fn t0102() {
    check(102);
}

#[test]
fn t0103() {
    check(103);
}

#[test]
fn t0104() {
    check(104);
}

#[test]
fn t0105() {
    check(105);
}

#[test]
fn t0106() {
    check(106);
}

#[test]
fn t0107() {
    check(107);
}

#[test]
fn t0108() {
    check(108);
}

#[test]
fn t0109() {
    check(109);
}

#[test]
fn t0110() {
    check(110);
}

#[test]
fn t0111() {
    check(111);
}

#[test]
fn t0112() {
    check(112);
}

#[test]
fn t0113() {
    check(113);
}

#[test]
fn t0114() {
    check(114);
}

#[test]
fn t0115() {
    check(115);
}

#[test]
fn t0116() {
    check(116);
}

#[test]
fn t0117() {
    check(117);
}

#[test]
fn t0118() {
    check(118);
}

#[test]
fn t0119() {
    check(119);
}

#[test]
fn t0120() {
    check(120);
}

#[test]
fn t0121() {
    check(121);
}

#[test]
fn t0122() {
    check(122);
}

#[test]
fn t0123() {
    check(123);
}

#[test]
fn t0124() {
    check(124);
}

#[test]
fn t0125() {
    check(125);
}

#[test]
fn t0126() {
    check(126);
}

#[test]
fn t0127() {
    check(127);
}

#[test]
fn t0128() {
    check(128);
}

#[test]
fn t0129() {
    check(129);
}

#[test]
fn t0130() {
    check(130);
}

#[test]
fn t0131() {
    check(131);
}

#[test]
fn t0132() {
    check(132);
}

#[test]
fn t0133() {
    check(133);
}

#[test]
fn t0134() {
    check(134);
}

#[test]
fn t0135() {
    check(135);
}

#[test]
fn t0136() {
    check(136);
}

#[test]
fn t0137() {
    check(137);
}

#[test]
fn t0138() {
    check(138);
}

#[test]
fn t0139() {
    check(139);
}

#[test]
fn t0140() {
    check(140);
}

#[test]
fn t0141() {
    check(141);
}

#[test]
fn t0142() {
    check(142);
}

#[test]
fn t0143() {
    check(143);
}

#[test]
fn t0144() {
    check(144);
}

#[test]
fn t0145() {
    check(145);
}

#[test]
fn t0146() {
    check(146);
}

#[test]
fn t0147() {
    check(147);
}

#[test]
fn t0148() {
    check(148);
}

#[test]
fn t0149() {
    check(149);
}

#[test]
fn t0150() {
    check(150);
}

#[test]
fn t0151() {
    check(151);
}

#[test]
fn t0152() {
    check(152);
}

#[test]
fn t0153() {
    check(153);
}

#[test]
fn t0154() {
    check(154);
}

#[test]
fn t0155() {
    check(155);
}

#[test]
fn t0156() {
    check(156);
}

#[test]
fn t0157() {
    check(157);
}

#[test]
fn t0158() {
    check(158);
}

#[test]
fn t0159() {
    check(159);
}

#[test]
fn t0160() {
    check(160);
}

#[test]
fn t0161() {
    check(161);
}

#[test]
fn t0162() {
    check(162);
}

#[test]
fn t0163() {
    check(163);
}

#[test]
fn t0164() {
    check(164);
}

#[test]
fn t0165() {
    check(165);
}

#[test]
fn t0166() {
    check(166);
}

#[test]
fn t0167() {
    check(167);
}

#[test]
fn t0168() {
    check(168);
}

#[test]
fn t0169() {
    check(169);
}

#[test]
fn t0170() {
    check(170);
}

#[test]
fn t0171() {
    check(171);
}

#[test]
fn t0172() {
    check(172);
}

#[test]
fn t0173() {
    check(173);
}

#[test]
fn t0174() {
    check(174);
}

#[test]
fn t0175() {
    check(175);
}

#[test]
fn t0176() {
    check(176);
}

#[test]
fn t0177() {
    check(177);
}

#[test]
fn t0178() {
    check(178);
}

#[test]
fn t0179() {
    check(179);
}

#[test]
fn t0180() {
    check(180);
}

#[test]
fn t0181() {
    check(181);
}

#[test]
fn t0182() {
    check(182);
}

#[test]
fn t0183() {
    check(183);
}

#[test]
fn t0184() {
    check(184);
}

#[test]
fn t0185() {
    check(185);
}

#[test]
fn t0186() {
    check(186);
}

#[test]
fn t0187() {
    check(187);
}

#[test]
fn t0188() {
    check(188);
}

#[test]
fn t0189() {
    check(189);
}

#[test]
fn t0190() {
    check(190);
}

#[test]
fn t0191() {
    check(191);
}

#[test]
fn t0192() {
    check(192);
}

#[test]
fn t0193() {
    check(193);
}

#[test]
fn t0194() {
    check(194);
}

#[test]
fn t0195() {
    check(195);
}

#[test]
fn t0196() {
    check(196);
}

#[test]
fn t0197() {
    check(197);
}

#[test]
fn t0198() {
    check(198);
}

#[test]
fn t0199() {
    check(199);
}

#[test]
fn t0200() {
    check(200);
}

#[test]
fn t0201() {
    check(201);
}

#[test]
fn t0202() {
    check(202);
}

#[test]
fn t0203() {
    check(203);
}

#[test]
fn t0204() {
    check(204);
}

#[test]
fn t0205() {
    check(205);
}

#[test]
fn t0206() {
    check(206);
}

#[test]
fn t0207() {
    check(207);
}

#[test]
fn t0208() {
    check(208);
}

#[test]
fn t0209() {
    check(209);
}

#[test]
fn t0210() {
    check(210);
}

#[test]
fn t0211() {
    check(211);
}

#[test]
fn t0212() {
    check(212);
}

#[test]
fn t0213() {
    check(213);
}

#[test]
fn t0214() {
    check(214);
}

#[test]
fn t0215() {
    check(215);
}

#[test]
fn t0216() {
    check(216);
}

#[test]
fn t0217() {
    check(217);
}

#[test]
fn t0218() {
    check(218);
}

#[test]
fn t0219() {
    check(219);
}

#[test]
fn t0220() {
    check(220);
}

#[test]
fn t0221() {
    check(221);
}

#[test]
fn t0222() {
    check(222);
}

#[test]
fn t0223() {
    check(223);
}

#[test]
fn t0224() {
    check(224);
}

#[test]
fn t0225() {
    check(225);
}

#[test]
fn t0226() {
    check(226);
}

#[test]
fn t0227() {
    check(227);
}

#[test]
fn t0228() {
    check(228);
}

#[test]
fn t0229() {
    check(229);
}

#[test]
fn t0230() {
    check(230);
}

#[test]
fn t0231() {
    check(231);
}

#[test]
fn t0232() {
    check(232);
}

#[test]
fn t0233() {
    check(233);
}

#[test]
fn t0234() {
    check(234);
}

#[test]
fn t0235() {
    check(235);
}

#[test]
fn t0236() {
    check(236);
}

#[test]
fn t0237() {
    check(237);
}

#[test]
fn t0238() {
    check(238);
}

#[test]
fn t0239() {
    check(239);
}

#[test]
fn t0240() {
    check(240);
}

#[test]
fn t0241() {
    check(241);
}

#[test]
fn t0242() {
    check(242);
}

#[test]
fn t0243() {
    check(243);
}

#[test]
fn t0244() {
    check(244);
}

#[test]
fn t0245() {
    check(245);
}

#[test]
fn t0246() {
    check(246);
}

#[test]
fn t0247() {
    check(247);
}

#[test]
fn t0248() {
    check(248);
}

#[test]
fn t0249() {
    check(249);
}

#[test]
fn t0250() {
    check(250);
}

#[test]
fn t0251() {
    check(251);
}

#[test]
fn t0252() {
    check(252);
}

#[test]
fn t0253() {
    check(253);
}

#[test]
fn t0254() {
    check(254);
}

#[test]
fn t0255() {
    check(255);
}

#[test]
fn t0256() {
    check(256);
}

#[test]
fn t0257() {
    check(257);
}

#[test]
fn t0258() {
    check(258);
}

#[test]
fn t0259() {
    check(259);
}

#[test]
fn t0260() {
    check(260);
}

#[test]
fn t0261() {
    check(261);
}

#[test]
fn t0262() {
    check(262);
}

#[test]
fn t0263() {
    check(263);
}

#[test]
fn t0264() {
    check(264);
}

#[test]
fn t0265() {
    check(265);
}

#[test]
fn t0266() {
    check(266);
}

#[test]
fn t0267() {
    check(267);
}

#[test]
fn t0268() {
    check(268);
}

#[test]
fn t0269() {
    check(269);
}

#[test]
fn t0270() {
    check(270);
}

#[test]
fn t0271() {
    check(271);
}

#[test]
fn t0272() {
    check(272);
}

#[test]
fn t0273() {
    check(273);
}

#[test]
fn t0274() {
    check(274);
}

#[test]
fn t0275() {
    check(275);
}

#[test]
fn t0276() {
    check(276);
}

#[test]
fn t0277() {
    check(277);
}

#[test]
fn t0278() {
    check(278);
}

#[test]
fn t0279() {
    check(279);
}

#[test]
fn t0280() {
    check(280);
}

#[test]
fn t0281() {
    check(281);
}

#[test]
fn t0282() {
    check(282);
}

#[test]
fn t0283() {
    check(283);
}

#[test]
fn t0284() {
    check(284);
}

#[test]
fn t0285() {
    check(285);
}

#[test]
fn t0286() {
    check(286);
}

#[test]
fn t0287() {
    check(287);
}

#[test]
fn t0288() {
    check(288);
}

#[test]
fn t0289() {
    check(289);
}

#[test]
fn t0290() {
    check(290);
}

#[test]
fn t0291() {
    check(291);
}

#[test]
fn t0292() {
    check(292);
}

#[test]
fn t0293() {
    check(293);
}

#[test]
fn t0294() {
    check(294);
}

#[test]
fn t0295() {
    check(295);
}

#[test]
fn t0296() {
    check(296);
}

#[test]
fn t0297() {
    check(297);
}

#[test]
fn t0298() {
    check(298);
}

#[test]
fn t0299() {
    check(299);
}

#[test]
fn t0300() {
    check(300);
}

#[test]
fn t0301() {
    check(301);
}

#[test]
fn t0302() {
    check(302);
}

#[test]
fn t0303() {
    check(303);
}

#[test]
fn t0304() {
    check(304);
}

#[test]
fn t0305() {
    check(305);
}

#[test]
fn t0306() {
    check(306);
}

#[test]
fn t0307() {
    check(307);
}

#[test]
fn t0308() {
    check(308);
}

#[test]
fn t0309() {
    check(309);
}

#[test]
fn t0310() {
    check(310);
}

#[test]
fn t0311() {
    check(311);
}

#[test]
fn t0312() {
    check(312);
}

#[test]
fn t0313() {
    check(313);
}

#[test]
fn t0314() {
    check(314);
}

#[test]
fn t0315() {
    check(315);
}

#[test]
fn t0316() {
    check(316);
}

#[test]
fn t0317() {
    check(317);
}

#[test]
fn t0318() {
    check(318);
}

#[test]
fn t0319() {
    check(319);
}

#[test]
fn t0320() {
    check(320);
}

#[test]
fn t0321() {
    check(321);
}

#[test]
fn t0322() {
    check(322);
}

#[test]
fn t0323() {
    check(323);
}

#[test]
fn t0324() {
    check(324);
}

#[test]
fn t0325() {
    check(325);
}

#[test]
fn t0326() {
    check(326);
}

#[test]
fn t0327() {
    check(327);
}

#[test]
fn t0328() {
    check(328);
}

#[test]
fn t0329() {
    check(329);
}

#[test]
fn t0330() {
    check(330);
}

#[test]
fn t0331() {
    check(331);
}

#[test]
fn t0332() {
    check(332);
}

#[test]
fn t0333() {
    check(333);
}

#[test]
fn t0334() {
    check(334);
}

#[test]
fn t0335() {
    check(335);
}

#[test]
fn t0336() {
    check(336);
}

#[test]
fn t0337() {
    check(337);
}

#[test]
fn t0338() {
    check(338);
}

#[test]
fn t0339() {
    check(339);
}

#[test]
fn t0340() {
    check(340);
}

#[test]
fn t0341() {
    check(341);
}

#[test]
fn t0342() {
    check(342);
}

#[test]
fn t0343() {
    check(343);
}

#[test]
fn t0344() {
    check(344);
}

#[test]
fn t0345() {
    check(345);
}

#[test]
fn t0346() {
    check(346);
}

#[test]
fn t0347() {
    check(347);
}

#[test]
fn t0348() {
    check(348);
}

#[test]
fn t0349() {
    check(349);
}

#[test]
fn t0350() {
    check(350);
}

#[test]
fn t0351() {
    check(351);
}

#[test]
fn t0352() {
    check(352);
}

#[test]
fn t0353() {
    check(353);
}

#[test]
fn t0354() {
    check(354);
}

#[test]
fn t0355() {
    check(355);
}

#[test]
fn t0356() {
    check(356);
}

#[test]
fn t0357() {
    check(357);
}

#[test]
fn t0358() {
    check(358);
}

#[test]
fn t0359() {
    check(359);
}

#[test]
fn t0360() {
    check(360);
}

#[test]
fn t0361() {
    check(361);
}

#[test]
fn t0362() {
    check(362);
}

#[test]
fn t0363() {
    check(363);
}

#[test]
fn t0364() {
    check(364);
}

#[test]
fn t0365() {
    check(365);
}

#[test]
fn t0366() {
    check(366);
}

#[test]
fn t0367() {
    check(367);
}

#[test]
fn t0368() {
    check(368);
}

#[test]
fn t0369() {
    check(369);
}

#[test]
fn t0370() {
    check(370);
}

#[test]
fn t0371() {
    check(371);
}

#[test]
fn t0372() {
    check(372);
}

#[test]
fn t0373() {
    check(373);
}

#[test]
fn t0374() {
    check(374);
}

#[test]
fn t0375() {
    check(375);
}

#[test]
fn t0376() {
    check(376);
}

#[test]
fn t0377() {
    check(377);
}

#[test]
fn t0378() {
    check(378);
}

#[test]
fn t0379() {
    check(379);
}

#[test]
fn t0380() {
    check(380);
}

#[test]
fn t0381() {
    check(381);
}

#[test]
fn t0382() {
    check(382);
}

#[test]
fn t0383() {
    check(383);
}

#[test]
fn t0384() {
    check(384);
}

#[test]
fn t0385() {
    check(385);
}

#[test]
fn t0386() {
    check(386);
}

#[test]
fn t0387() {
    check(387);
}

#[test]
fn t0388() {
    check(388);
}

#[test]
fn t0389() {
    check(389);
}

#[test]
fn t0390() {
    check(390);
}

#[test]
fn t0391() {
    check(391);
}

#[test]
fn t0392() {
    check(392);
}

#[test]
fn t0393() {
    check(393);
}

#[test]
fn t0394() {
    check(394);
}

#[test]
fn t0395() {
    check(395);
}

#[test]
fn t0396() {
    check(396);
}

#[test]
fn t0397() {
    check(397);
}

#[test]
fn t0398() {
    check(398);
}

#[test]
fn t0399() {
    check(399);
}

#[test]
fn t0400() {
    check(400);
}

#[test]
fn t0401() {
    check(401);
}

#[test]
fn t0402() {
    check(402);
}

#[test]
fn t0403() {
    check(403);
}

#[test]
fn t0404() {
    check(404);
}

#[test]
fn t0405() {
    check(405);
}

#[test]
fn t0406() {
    check(406);
}

#[test]
fn t0407() {
    check(407);
}

#[test]
fn t0408() {
    check(408);
}

#[test]
fn t0409() {
    check(409);
}

#[test]
fn t0410() {
    check(410);
}

#[test]
fn t0411() {
    check(411);
}

#[test]
fn t0412() {
    check(412);
}

#[test]
fn t0413() {
    check(413);
}

#[test]
fn t0414() {
    check(414);
}

#[test]
fn t0415() {
    check(415);
}

#[test]
fn t0416() {
    check(416);
}

#[test]
fn t0417() {
    check(417);
}

#[test]
fn t0418() {
    check(418);
}

#[test]
fn t0419() {
    check(419);
}

#[test]
fn t0420() {
    check(420);
}

#[test]
fn t0421() {
    check(421);
}

#[test]
fn t0422() {
    check(422);
}

#[test]
fn t0423() {
    check(423);
}

#[test]
fn t0424() {
    check(424);
}

#[test]
fn t0425() {
    check(425);
}

#[test]
fn t0426() {
    check(426);
}

#[test]
fn t0427() {
    check(427);
}

#[test]
fn t0428() {
    check(428);
}

#[test]
fn t0429() {
    check(429);
}

#[test]
fn t0430() {
    check(430);
}

#[test]
fn t0431() {
    check(431);
}

#[test]
fn t0432() {
    check(432);
}

#[test]
fn t0433() {
    check(433);
}

#[test]
fn t0434() {
    check(434);
}

#[test]
fn t0435() {
    check(435);
}

#[test]
fn t0436() {
    check(436);
}

#[test]
fn t0437() {
    check(437);
}

#[test]
fn t0438() {
    check(438);
}

#[test]
fn t0439() {
    check(439);
}

#[test]
fn t0440() {
    check(440);
}

#[test]
fn t0441() {
    check(441);
}

#[test]
fn t0442() {
    check(442);
}

#[test]
fn t0443() {
    check(443);
}

#[test]
fn t0444() {
    check(444);
}

#[test]
fn t0445() {
    check(445);
}

#[test]
fn t0446() {
    check(446);
}

#[test]
fn t0447() {
    check(447);
}

#[test]
fn t0448() {
    check(448);
}

#[test]
fn t0449() {
    check(449);
}

#[test]
fn t0450() {
    check(450);
}

#[test]
fn t0451() {
    check(451);
}

#[test]
fn t0452() {
    check(452);
}

#[test]
fn t0453() {
    check(453);
}

#[test]
fn t0454() {
    check(454);
}

#[test]
fn t0455() {
    check(455);
}

#[test]
fn t0456() {
    check(456);
}

#[test]
fn t0457() {
    check(457);
}

#[test]
fn t0458() {
    check(458);
}

#[test]
fn t0459() {
    check(459);
}

#[test]
fn t0460() {
    check(460);
}

#[test]
fn t0461() {
    check(461);
}

#[test]
fn t0462() {
    check(462);
}

#[test]
fn t0463() {
    check(463);
}

#[test]
fn t0464() {
    check(464);
}

#[test]
fn t0465() {
    check(465);
}

#[test]
fn t0466() {
    check(466);
}

#[test]
fn t0467() {
    check(467);
}

#[test]
fn t0468() {
    check(468);
}

#[test]
fn t0469() {
    check(469);
}

#[test]
fn t0470() {
    check(470);
}

#[test]
fn t0471() {
    check(471);
}

#[test]
fn t0472() {
    check(472);
}

#[test]
fn t0473() {
    check(473);
}

#[test]
fn t0474() {
    check(474);
}

#[test]
fn t0475() {
    check(475);
}

#[test]
fn t0476() {
    check(476);
}

#[test]
fn t0477() {
    check(477);
}

#[test]
fn t0478() {
    check(478);
}

#[test]
fn t0479() {
    check(479);
}

#[test]
fn t0480() {
    check(480);
}

#[test]
fn t0481() {
    check(481);
}

#[test]
fn t0482() {
    check(482);
}

#[test]
fn t0483() {
    check(483);
}

#[test]
fn t0484() {
    check(484);
}

#[test]
fn t0485() {
    check(485);
}

#[test]
fn t0486() {
    check(486);
}

#[test]
fn t0487() {
    check(487);
}

#[test]
fn t0488() {
    check(488);
}

#[test]
fn t0489() {
    check(489);
}

#[test]
fn t0490() {
    check(490);
}

#[test]
fn t0491() {
    check(491);
}

#[test]
fn t0492() {
    check(492);
}

#[test]
fn t0493() {
    check(493);
}

#[test]
fn t0494() {
    check(494);
}

#[test]
fn t0495() {
    check(495);
}

#[test]
fn t0496() {
    check(496);
}

#[test]
fn t0497() {
    check(497);
}

#[test]
fn t0498() {
    check(498);
}

#[test]
fn t0499() {
    check(499);
}

#[test]
fn t0500() {
    check(500);
}

#[test]
fn t0501() {
    check(501);
}

#[test]
fn t0502() {
    check(502);
}

#[test]
fn t0503() {
    check(503);
}

#[test]
fn t0504() {
    check(504);
}

#[test]
fn t0505() {
    check(505);
}

#[test]
fn t0506() {
    check(506);
}

#[test]
fn t0507() {
    check(507);
}

#[test]
fn t0508() {
    check(508);
}

#[test]
fn t0509() {
    check(509);
}

#[test]
fn t0510() {
    check(510);
}

#[test]
fn t0511() {
    check(511);
}

#[test]
fn t0512() {
    check(512);
}

#[test]
fn t0513() {
    check(513);
}

#[test]
fn t0514() {
    check(514);
}

#[test]
fn t0515() {
    check(515);
}

#[test]
fn t0516() {
    check(516);
}

#[test]
fn t0517() {
    check(517);
}

#[test]
fn t0518() {
    check(518);
}

#[test]
fn t0519() {
    check(519);
}

#[test]
fn t0520() {
    check(520);
}

#[test]
fn t0521() {
    check(521);
}

#[test]
fn t0522() {
    check(522);
}

#[test]
fn t0523() {
    check(523);
}

#[test]
fn t0524() {
    check(524);
}

#[test]
fn t0525() {
    check(525);
}

#[test]
fn t0526() {
    check(526);
}

#[test]
fn t0527() {
    check(527);
}

#[test]
fn t0528() {
    check(528);
}

#[test]
fn t0529() {
    check(529);
}

#[test]
fn t0530() {
    check(530);
}

#[test]
fn t0531() {
    check(531);
}

#[test]
fn t0532() {
    check(532);
}

#[test]
fn t0533() {
    check(533);
}

#[test]
fn t0534() {
    check(534);
}

#[test]
fn t0535() {
    check(535);
}

#[test]
fn t0536() {
    check(536);
}

#[test]
fn t0537() {
    check(537);
}

#[test]
fn t0538() {
    check(538);
}

#[test]
fn t0539() {
    check(539);
}

#[test]
fn t0540() {
    check(540);
}

#[test]
fn t0541() {
    check(541);
}

#[test]
fn t0542() {
    check(542);
}

#[test]
fn t0543() {
    check(543);
}

#[test]
fn t0544() {
    check(544);
}

#[test]
fn t0545() {
    check(545);
}

#[test]
fn t0546() {
    check(546);
}

#[test]
fn t0547() {
    check(547);
}

#[test]
fn t0548() {
    check(548);
}

#[test]
fn t0549() {
    check(549);
}

#[test]
fn t0550() {
    check(550);
}

#[test]
fn t0551() {
    check(551);
}

#[test]
fn t0552() {
    check(552);
}

#[test]
fn t0553() {
    check(553);
}

#[test]
fn t0554() {
    check(554);
}

#[test]
fn t0555() {
    check(555);
}

#[test]
fn t0556() {
    check(556);
}

#[test]
fn t0557() {
    check(557);
}

#[test]
fn t0558() {
    check(558);
}

#[test]
fn t0559() {
    check(559);
}

#[test]
fn t0560() {
    check(560);
}

#[test]
fn t0561() {
    check(561);
}

#[test]
fn t0562() {
    check(562);
}

#[test]
fn t0563() {
    check(563);
}

#[test]
fn t0564() {
    check(564);
}

#[test]
fn t0565() {
    check(565);
}

#[test]
fn t0566() {
    check(566);
}

#[test]
fn t0567() {
    check(567);
}

#[test]
fn t0568() {
    check(568);
}

#[test]
fn t0569() {
    check(569);
}

#[test]
fn t0570() {
    check(570);
}

#[test]
fn t0571() {
    check(571);
}

#[test]
fn t0572() {
    check(572);
}

#[test]
fn t0573() {
    check(573);
}

#[test]
fn t0574() {
    check(574);
}

#[test]
fn t0575() {
    check(575);
}

#[test]
fn t0576() {
    check(576);
}

#[test]
fn t0577() {
    check(577);
}

#[test]
fn t0578() {
    check(578);
}

#[test]
fn t0579() {
    check(579);
}

#[test]
fn t0580() {
    check(580);
}

#[test]
fn t0581() {
    check(581);
}

#[test]
fn t0582() {
    check(582);
}

#[test]
fn t0583() {
    check(583);
}

#[test]
fn t0584() {
    check(584);
}

#[test]
fn t0585() {
    check(585);
}

#[test]
fn t0586() {
    check(586);
}

#[test]
fn t0587() {
    check(587);
}

#[test]
fn t0588() {
    check(588);
}

#[test]
fn t0589() {
    check(589);
}

#[test]
fn t0590() {
    check(590);
}

#[test]
fn t0591() {
    check(591);
}

#[test]
fn t0592() {
    check(592);
}

#[test]
fn t0593() {
    check(593);
}

#[test]
fn t0594() {
    check(594);
}

#[test]
fn t0595() {
    check(595);
}

#[test]
fn t0596() {
    check(596);
}

#[test]
fn t0597() {
    check(597);
}

#[test]
fn t0598() {
    check(598);
}

#[test]
fn t0599() {
    check(599);
}

#[test]
fn t0600() {
    check(600);
}

#[test]
fn t0601() {
    check(601);
}

#[test]
fn t0602() {
    check(602);
}

#[test]
fn t0603() {
    check(603);
}

#[test]
fn t0604() {
    check(604);
}

#[test]
fn t0605() {
    check(605);
}

#[test]
fn t0606() {
    check(606);
}

#[test]
fn t0607() {
    check(607);
}

#[test]
fn t0608() {
    check(608);
}

#[test]
fn t0609() {
    check(609);
}

#[test]
fn t0610() {
    check(610);
}

#[test]
fn t0611() {
    check(611);
}

#[test]
fn t0612() {
    check(612);
}

#[test]
fn t0613() {
    check(613);
}

#[test]
fn t0614() {
    check(614);
}

#[test]
fn t0615() {
    check(615);
}

#[test]
fn t0616() {
    check(616);
}

#[test]
fn t0617() {
    check(617);
}

#[test]
fn t0618() {
    check(618);
}

#[test]
fn t0619() {
    check(619);
}

#[test]
fn t0620() {
    check(620);
}

#[test]
fn t0621() {
    check(621);
}

#[test]
fn t0622() {
    check(622);
}

#[test]
fn t0623() {
    check(623);
}

#[test]
fn t0624() {
    check(624);
}

#[test]
fn t0625() {
    check(625);
}

#[test]
fn t0626() {
    check(626);
}

#[test]
fn t0627() {
    check(627);
}

#[test]
fn t0628() {
    check(628);
}

#[test]
fn t0629() {
    check(629);
}

#[test]
fn t0630() {
    check(630);
}

#[test]
fn t0631() {
    check(631);
}

#[test]
fn t0632() {
    check(632);
}

#[test]
fn t0633() {
    check(633);
}

#[test]
fn t0634() {
    check(634);
}

#[test]
fn t0635() {
    check(635);
}

#[test]
fn t0636() {
    check(636);
}

#[test]
fn t0637() {
    check(637);
}

#[test]
fn t0638() {
    check(638);
}

#[test]
fn t0639() {
    check(639);
}

#[test]
fn t0640() {
    check(640);
}

#[test]
fn t0641() {
    check(641);
}

#[test]
fn t0642() {
    check(642);
}

#[test]
fn t0643() {
    check(643);
}

#[test]
fn t0644() {
    check(644);
}

#[test]
fn t0645() {
    check(645);
}

#[test]
fn t0646() {
    check(646);
}

#[test]
fn t0647() {
    check(647);
}

#[test]
fn t0648() {
    check(648);
}

#[test]
fn t0649() {
    check(649);
}

#[test]
fn t0650() {
    check(650);
}

#[test]
fn t0651() {
    check(651);
}

#[test]
fn t0652() {
    check(652);
}

#[test]
fn t0653() {
    check(653);
}

#[test]
fn t0654() {
    check(654);
}

#[test]
fn t0655() {
    check(655);
}

#[test]
fn t0656() {
    check(656);
}

#[test]
fn t0657() {
    check(657);
}

#[test]
fn t0658() {
    check(658);
}

#[test]
fn t0659() {
    check(659);
}

#[test]
fn t0660() {
    check(660);
}

#[test]
fn t0661() {
    check(661);
}

#[test]
fn t0662() {
    check(662);
}

#[test]
fn t0663() {
    check(663);
}

#[test]
fn t0664() {
    check(664);
}

#[test]
fn t0665() {
    check(665);
}

#[test]
fn t0666() {
    check(666);
}

#[test]
fn t0667() {
    check(667);
}

#[test]
fn t0668() {
    check(668);
}

#[test]
fn t0669() {
    check(669);
}

#[test]
fn t0670() {
    check(670);
}

#[test]
fn t0671() {
    check(671);
}

#[test]
fn t0672() {
    check(672);
}

#[test]
fn t0673() {
    check(673);
}

#[test]
fn t0674() {
    check(674);
}

#[test]
fn t0675() {
    check(675);
}

#[test]
fn t0676() {
    check(676);
}

#[test]
fn t0677() {
    check(677);
}

#[test]
fn t0678() {
    check(678);
}

#[test]
fn t0679() {
    check(679);
}

#[test]
fn t0680() {
    check(680);
}

#[test]
fn t0681() {
    check(681);
}

#[test]
fn t0682() {
    check(682);
}

#[test]
fn t0683() {
    check(683);
}

#[test]
fn t0684() {
    check(684);
}

#[test]
fn t0685() {
    check(685);
}

#[test]
fn t0686() {
    check(686);
}

#[test]
fn t0687() {
    check(687);
}

#[test]
fn t0688() {
    check(688);
}

#[test]
fn t0689() {
    check(689);
}

#[test]
fn t0690() {
    check(690);
}

#[test]
fn t0691() {
    check(691);
}

#[test]
fn t0692() {
    check(692);
}

#[test]
fn t0693() {
    check(693);
}

#[test]
fn t0694() {
    check(694);
}

#[test]
fn t0695() {
    check(695);
}

#[test]
fn t0696() {
    check(696);
}

#[test]
fn t0697() {
    check(697);
}

#[test]
fn t0698() {
    check(698);
}

#[test]
fn t0699() {
    check(699);
}

#[test]
fn t0700() {
    check(700);
}

#[test]
fn t0701() {
    check(701);
}

#[test]
fn t0702() {
    check(702);
}

#[test]
fn t0703() {
    check(703);
}

#[test]
fn t0704() {
    check(704);
}

#[test]
fn t0705() {
    check(705);
}

#[test]
fn t0706() {
    check(706);
}

#[test]
fn t0707() {
    check(707);
}

#[test]
fn t0708() {
    check(708);
}

#[test]
fn t0709() {
    check(709);
}

#[test]
fn t0710() {
    check(710);
}

#[test]
fn t0711() {
    check(711);
}

#[test]
fn t0712() {
    check(712);
}

#[test]
fn t0713() {
    check(713);
}

#[test]
fn t0714() {
    check(714);
}

#[test]
fn t0715() {
    check(715);
}

#[test]
fn t0716() {
    check(716);
}

#[test]
fn t0717() {
    check(717);
}

#[test]
fn t0718() {
    check(718);
}

#[test]
fn t0719() {
    check(719);
}

#[test]
fn t0720() {
    check(720);
}

#[test]
fn t0721() {
    check(721);
}

#[test]
fn t0722() {
    check(722);
}

#[test]
fn t0723() {
    check(723);
}

#[test]
fn t0724() {
    check(724);
}

#[test]
fn t0725() {
    check(725);
}

#[test]
fn t0726() {
    check(726);
}

#[test]
fn t0727() {
    check(727);
}

#[test]
fn t0728() {
    check(728);
}

#[test]
fn t0729() {
    check(729);
}

#[test]
fn t0730() {
    check(730);
}

#[test]
fn t0731() {
    check(731);
}

#[test]
fn t0732() {
    check(732);
}

#[test]
fn t0733() {
    check(733);
}

#[test]
fn t0734() {
    check(734);
}

#[test]
fn t0735() {
    check(735);
}

#[test]
fn t0736() {
    check(736);
}

#[test]
fn t0737() {
    check(737);
}

#[test]
fn t0738() {
    check(738);
}

#[test]
fn t0739() {
    check(739);
}

#[test]
fn t0740() {
    check(740);
}

#[test]
fn t0741() {
    check(741);
}

#[test]
fn t0742() {
    check(742);
}

#[test]
fn t0743() {
    check(743);
}

#[test]
fn t0744() {
    check(744);
}

#[test]
fn t0745() {
    check(745);
}

#[test]
fn t0746() {
    check(746);
}

#[test]
fn t0747() {
    check(747);
}

#[test]
fn t0748() {
    check(748);
}

#[test]
fn t0749() {
    check(749);
}

#[test]
fn t0750() {
    check(750);
}

#[test]
fn t0751() {
    check(751);
}

#[test]
fn t0752() {
    check(752);
}

#[test]
fn t0753() {
    check(753);
}

#[test]
fn t0754() {
    check(754);
}

#[test]
fn t0755() {
    check(755);
}

#[test]
fn t0756() {
    check(756);
}

#[test]
fn t0757() {
    check(757);
}

#[test]
fn t0758() {
    check(758);
}

#[test]
fn t0759() {
    check(759);
}

#[test]
fn t0760() {
    check(760);
}

#[test]
fn t0761() {
    check(761);
}

#[test]
fn t0762() {
    check(762);
}

#[test]
fn t0763() {
    check(763);
}

#[test]
fn t0764() {
    check(764);
}

#[test]
fn t0765() {
    check(765);
}

#[test]
fn t0766() {
    check(766);
}

#[test]
fn t0767() {
    check(767);
}

#[test]
fn t0768() {
    check(768);
}

#[test]
fn t0769() {
    check(769);
}

#[test]
fn t0770() {
    check(770);
}

#[test]
fn t0771() {
    check(771);
}

#[test]
fn t0772() {
    check(772);
}

#[test]
fn t0773() {
    check(773);
}

#[test]
fn t0774() {
    check(774);
}

#[test]
fn t0775() {
    check(775);
}

#[test]
fn t0776() {
    check(776);
}

#[test]
fn t0777() {
    check(777);
}

#[test]
fn t0778() {
    check(778);
}

#[test]
fn t0779() {
    check(779);
}

#[test]
fn t0780() {
    check(780);
}

#[test]
fn t0781() {
    check(781);
}

#[test]
fn t0782() {
    check(782);
}

#[test]
fn t0783() {
    check(783);
}

#[test]
fn t0784() {
    check(784);
}

#[test]
fn t0785() {
    check(785);
}

#[test]
fn t0786() {
    check(786);
}

#[test]
fn t0787() {
    check(787);
}

#[test]
fn t0788() {
    check(788);
}

#[test]
fn t0789() {
    check(789);
}

#[test]
fn t0790() {
    check(790);
}

#[test]
fn t0791() {
    check(791);
}

#[test]
fn t0792() {
    check(792);
}

#[test]
fn t0793() {
    check(793);
}

#[test]
fn t0794() {
    check(794);
}

#[test]
fn t0795() {
    check(795);
}

#[test]
fn t0796() {
    check(796);
}

#[test]
fn t0797() {
    check(797);
}

#[test]
fn t0798() {
    check(798);
}

#[test]
fn t0799() {
    check(799);
}

#[test]
fn t0800() {
    check(800);
}

#[test]
fn t0801() {
    check(801);
}

#[test]
fn t0802() {
    check(802);
}

#[test]
fn t0803() {
    check(803);
}

#[test]
fn t0804() {
    check(804);
}

#[test]
fn t0805() {
    check(805);
}

#[test]
fn t0806() {
    check(806);
}

#[test]
fn t0807() {
    check(807);
}

#[test]
fn t0808() {
    check(808);
}

#[test]
fn t0809() {
    check(809);
}

#[test]
fn t0810() {
    check(810);
}

#[test]
fn t0811() {
    check(811);
}

#[test]
fn t0812() {
    check(812);
}

#[test]
fn t0813() {
    check(813);
}

#[test]
fn t0814() {
    check(814);
}

#[test]
fn t0815() {
    check(815);
}

#[test]
fn t0816() {
    check(816);
}

#[test]
fn t0817() {
    check(817);
}

#[test]
fn t0818() {
    check(818);
}

#[test]
fn t0819() {
    check(819);
}

#[test]
fn t0820() {
    check(820);
}

#[test]
fn t0821() {
    check(821);
}

#[test]
fn t0822() {
    check(822);
}

#[test]
fn t0823() {
    check(823);
}

#[test]
fn t0824() {
    check(824);
}

#[test]
fn t0825() {
    check(825);
}

#[test]
fn t0826() {
    check(826);
}

#[test]
fn t0827() {
    check(827);
}

#[test]
fn t0828() {
    check(828);
}

#[test]
fn t0829() {
    check(829);
}

#[test]
fn t0830() {
    check(830);
}

#[test]
fn t0831() {
    check(831);
}

#[test]
fn t0832() {
    check(832);
}

#[test]
fn t0833() {
    check(833);
}

#[test]
fn t0834() {
    check(834);
}

#[test]
fn t0835() {
    check(835);
}

#[test]
fn t0836() {
    check(836);
}

#[test]
fn t0837() {
    check(837);
}

#[test]
fn t0838() {
    check(838);
}

#[test]
fn t0839() {
    check(839);
}

#[test]
fn t0840() {
    check(840);
}

#[test]
fn t0841() {
    check(841);
}

#[test]
fn t0842() {
    check(842);
}

#[test]
fn t0843() {
    check(843);
}

#[test]
fn t0844() {
    check(844);
}

#[test]
fn t0845() {
    check(845);
}

#[test]
fn t0846() {
    check(846);
}

#[test]
fn t0847() {
    check(847);
}

#[test]
fn t0848() {
    check(848);
}

#[test]
fn t0849() {
    check(849);
}

#[test]
fn t0850() {
    check(850);
}

#[test]
fn t0851() {
    check(851);
}

#[test]
fn t0852() {
    check(852);
}

#[test]
fn t0853() {
    check(853);
}

#[test]
fn t0854() {
    check(854);
}

#[test]
fn t0855() {
    check(855);
}

#[test]
fn t0856() {
    check(856);
}

#[test]
fn t0857() {
    check(857);
}

#[test]
fn t0858() {
    check(858);
}

#[test]
fn t0859() {
    check(859);
}

#[test]
fn t0860() {
    check(860);
}

#[test]
fn t0861() {
    check(861);
}

#[test]
fn t0862() {
    check(862);
}

#[test]
fn t0863() {
    check(863);
}

#[test]
fn t0864() {
    check(864);
}

#[test]
fn t0865() {
    check(865);
}

#[test]
fn t0866() {
    check(866);
}

#[test]
fn t0867() {
    check(867);
}

#[test]
fn t0868() {
    check(868);
}

#[test]
fn t0869() {
    check(869);
}

#[test]
fn t0870() {
    check(870);
}

#[test]
fn t0871() {
    check(871);
}

#[test]
fn t0872() {
    check(872);
}

#[test]
fn t0873() {
    check(873);
}

#[test]
fn t0874() {
    check(874);
}

#[test]
fn t0875() {
    check(875);
}

#[test]
fn t0876() {
    check(876);
}

#[test]
fn t0877() {
    check(877);
}

#[test]
fn t0878() {
    check(878);
}

#[test]
fn t0879() {
    check(879);
}

#[test]
fn t0880() {
    check(880);
}

#[test]
fn t0881() {
    check(881);
}

#[test]
fn t0882() {
    check(882);
}

#[test]
fn t0883() {
    check(883);
}

#[test]
fn t0884() {
    check(884);
}

#[test]
fn t0885() {
    check(885);
}

#[test]
fn t0886() {
    check(886);
}

#[test]
fn t0887() {
    check(887);
}

#[test]
fn t0888() {
    check(888);
}

#[test]
fn t0889() {
    check(889);
}

#[test]
fn t0890() {
    check(890);
}

#[test]
fn t0891() {
    check(891);
}

#[test]
fn t0892() {
    check(892);
}

#[test]
fn t0893() {
    check(893);
}

#[test]
fn t0894() {
    check(894);
}

#[test]
fn t0895() {
    check(895);
}

#[test]
fn t0896() {
    check(896);
}

#[test]
fn t0897() {
    check(897);
}

#[test]
fn t0898() {
    check(898);
}

#[test]
fn t0899() {
    check(899);
}

#[test]
fn t0900() {
    check(900);
}

#[test]
fn t0901() {
    check(901);
}

#[test]
fn t0902() {
    check(902);
}

#[test]
fn t0903() {
    check(903);
}

#[test]
fn t0904() {
    check(904);
}

#[test]
fn t0905() {
    check(905);
}

#[test]
fn t0906() {
    check(906);
}

#[test]
fn t0907() {
    check(907);
}

#[test]
fn t0908() {
    check(908);
}

#[test]
fn t0909() {
    check(909);
}

#[test]
fn t0910() {
    check(910);
}

#[test]
fn t0911() {
    check(911);
}

#[test]
fn t0912() {
    check(912);
}

#[test]
fn t0913() {
    check(913);
}

#[test]
fn t0914() {
    check(914);
}

#[test]
fn t0915() {
    check(915);
}

#[test]
fn t0916() {
    check(916);
}

#[test]
fn t0917() {
    check(917);
}

#[test]
fn t0918() {
    check(918);
}

#[test]
fn t0919() {
    check(919);
}

#[test]
fn t0920() {
    check(920);
}

#[test]
fn t0921() {
    check(921);
}

#[test]
fn t0922() {
    check(922);
}

#[test]
fn t0923() {
    check(923);
}

#[test]
fn t0924() {
    check(924);
}

#[test]
fn t0925() {
    check(925);
}

#[test]
fn t0926() {
    check(926);
}

#[test]
fn t0927() {
    check(927);
}

#[test]
fn t0928() {
    check(928);
}

#[test]
fn t0929() {
    check(929);
}

#[test]
fn t0930() {
    check(930);
}

#[test]
fn t0931() {
    check(931);
}

#[test]
fn t0932() {
    check(932);
}

#[test]
fn t0933() {
    check(933);
}

#[test]
fn t0934() {
    check(934);
}

#[test]
fn t0935() {
    check(935);
}

#[test]
fn t0936() {
    check(936);
}

#[test]
fn t0937() {
    check(937);
}

#[test]
fn t0938() {
    check(938);
}

#[test]
fn t0939() {
    check(939);
}

#[test]
fn t0940() {
    check(940);
}

#[test]
fn t0941() {
    check(941);
}

#[test]
fn t0942() {
    check(942);
}

#[test]
fn t0943() {
    check(943);
}

#[test]
fn t0944() {
    check(944);
}

#[test]
fn t0945() {
    check(945);
}

#[test]
fn t0946() {
    check(946);
}

#[test]
fn t0947() {
    check(947);
}

#[test]
fn t0948() {
    check(948);
}

#[test]
fn t0949() {
    check(949);
}

#[test]
fn t0950() {
    check(950);
}

#[test]
fn t0951() {
    check(951);
}

#[test]
fn t0952() {
    check(952);
}

#[test]
fn t0953() {
    check(953);
}

#[test]
fn t0954() {
    check(954);
}

#[test]
fn t0955() {
    check(955);
}

#[test]
fn t0956() {
    check(956);
}

#[test]
fn t0957() {
    check(957);
}

#[test]
fn t0958() {
    check(958);
}

#[test]
fn t0959() {
    check(959);
}

#[test]
fn t0960() {
    check(960);
}

#[test]
fn t0961() {
    check(961);
}

#[test]
fn t0962() {
    check(962);
}

#[test]
fn t0963() {
    check(963);
}

#[test]
fn t0964() {
    check(964);
}

#[test]
fn t0965() {
    check(965);
}

#[test]
fn t0966() {
    check(966);
}

#[test]
fn t0967() {
    check(967);
}

#[test]
fn t0968() {
    check(968);
}

#[test]
fn t0969() {
    check(969);
}

#[test]
fn t0970() {
    check(970);
}

#[test]
fn t0971() {
    check(971);
}

#[test]
fn t0972() {
    check(972);
}

#[test]
fn t0973() {
    check(973);
}

#[test]
fn t0974() {
    check(974);
}

#[test]
fn t0975() {
    check(975);
}

#[test]
fn t0976() {
    check(976);
}

#[test]
fn t0977() {
    check(977);
}

#[test]
fn t0978() {
    check(978);
}

#[test]
fn t0979() {
    check(979);
}

#[test]
fn t0980() {
    check(980);
}

#[test]
fn t0981() {
    check(981);
}

#[test]
fn t0982() {
    check(982);
}

#[test]
fn t0983() {
    check(983);
}

#[test]
fn t0984() {
    check(984);
}

#[test]
fn t0985() {
    check(985);
}

#[test]
fn t0986() {
    check(986);
}

#[test]
fn t0987() {
    check(987);
}

#[test]
fn t0988() {
    check(988);
}

#[test]
fn t0989() {
    check(989);
}

#[test]
fn t0990() {
    check(990);
}

#[test]
fn t0991() {
    check(991);
}

#[test]
fn t0992() {
    check(992);
}

#[test]
fn t0993() {
    check(993);
}

#[test]
fn t0994() {
    check(994);
}

#[test]
fn t0995() {
    check(995);
}

#[test]
fn t0996() {
    check(996);
}

#[test]
fn t0997() {
    check(997);
}

#[test]
fn t0998() {
    check(998);
}

#[test]
fn t0999() {
    check(999);
}
